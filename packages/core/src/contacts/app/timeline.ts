import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { contactErrors } from './errors.ts';
import { decodeCursor, encodeCursor, type SortKey } from './cursor.ts';
import { iso } from './row.ts';
import type { AppContact, TimelineItem } from './schemas.ts';
import { loadContact } from './write.ts';

/**
 * What happened to a contact, newest first: its notes, the events emitted about it, its deals, tasks, messages, form
 * submissions, page views and workflow runs.
 * Each source is a branch `(kind, id, at, data)`; every branch is cut to the page size on its own before the union is,
 * so a page reads at most `limit + 1` rows per source whatever the contact's history holds.
 */
const BRANCHES = [
  `select 'note' as kind, x.id, x.created_at as at, jsonb_build_object('body', x.body, 'authorId', x.author_id) as data
   from notes x where x.contact_id = ? and x.organization_id = ?`,
  // Events name their contact inside the payload (spec: data.contact.id); the organization filter narrows the scan.
  `select 'event', x.id, x.created_at, jsonb_build_object('event', x.event, 'source', x.payload->>'source')
   from outbox_events x where x.payload->'data'->'contact'->>'id' = ?::text and x.organization_id = ?
     and x.event <> 'tracking.page_visited'`,
  `select 'deal', x.id, x.created_at, jsonb_build_object('title', x.title, 'status', x.status, 'valueCents', x.value_cents,
     'currency', x.currency, 'stage', s.name)
   from deals x left join pipeline_stages s on s.id = x.stage_id where x.contact_id = ? and x.organization_id = ?`,
  `select 'task', x.id, x.created_at, jsonb_build_object('title', x.title, 'dueAt', x.due_at, 'completedAt', x.completed_at)
   from tasks x where x.contact_id = ? and x.organization_id = ?`,
  `select 'message', x.id, x.created_at, jsonb_build_object('direction', x.direction, 'channel', x.channel, 'body', x.body,
     'status', x.status)
   from messages x where x.contact_id = ? and x.organization_id = ?`,
  `select 'form_submission', x.id, x.created_at, jsonb_build_object('formId', x.form_id, 'formName', x.form_name, 'answers', x.answers,
     'attribution', x.attribution)
   from form_submissions x where x.contact_id = ? and x.organization_id = ?`,
  // Page views stand for their tracking.page_visited events, and include the views made before the visitor was known.
  `select 'page_view', x.id, x.created_at, jsonb_build_object('url', x.url, 'title', x.title, 'referrer', x.referrer)
   from page_views x where x.contact_id = ? and x.organization_id = ?`,
  `select 'workflow_run', x.id, x.created_at, jsonb_build_object('workflowId', x.workflow_id, 'workflowName', x.workflow,
     'status', x.status, 'steps', x.steps, 'finishedAt', x.finished_at)
   from workflow_runs x where x.contact_id = ? and x.organization_id = ?`,
];

const KEYS: SortKey[] = [
  { expr: 'at', type: 'timestamptz', dir: 'desc' },
  { expr: 'id', type: 'uuid', dir: 'desc' },
];

interface Row {
  kind: TimelineItem['kind'];
  id: string;
  at: Date | string;
  k0: string;
  data: Record<string, unknown>;
}

const isoOrNull = (v: unknown) => (typeof v === 'string' || v instanceof Date ? iso(v) : null);

function toItem(r: Row): TimelineItem {
  const base = { id: r.id, at: iso(r.at) };
  const d = r.data;
  switch (r.kind) {
    case 'note':
      return { kind: 'note', ...base, body: String(d.body), authorId: (d.authorId as string | null) ?? null };
    case 'event':
      return { kind: 'event', ...base, event: String(d.event), source: (d.source as string | null) ?? null };
    case 'deal':
      return {
        kind: 'deal',
        ...base,
        title: String(d.title),
        status: String(d.status),
        valueCents: d.valueCents === null || d.valueCents === undefined ? null : Number(d.valueCents),
        currency: String(d.currency),
        stage: (d.stage as string | null) ?? null,
      };
    case 'task':
      return { kind: 'task', ...base, title: String(d.title), dueAt: isoOrNull(d.dueAt), completedAt: isoOrNull(d.completedAt) };
    case 'message':
      return {
        kind: 'message',
        ...base,
        direction: String(d.direction),
        channel: String(d.channel),
        body: String(d.body),
        status: String(d.status),
      };
    case 'form_submission':
      return {
        kind: 'form_submission',
        ...base,
        formId: (d.formId as string | null) ?? null,
        formName: String(d.formName),
        answers: d.answers as Record<string, string | number | boolean>,
        attribution: d.attribution as { utm: Record<string, string>; referrer: string | null; landingPage: string | null },
      };
    case 'page_view':
      return { kind: 'page_view', ...base, url: String(d.url), title: (d.title as string | null) ?? null, referrer: (d.referrer as string | null) ?? null };
    case 'workflow_run':
      return {
        kind: 'workflow_run',
        ...base,
        workflowId: (d.workflowId as string | null) ?? null,
        workflowName: String(d.workflowName),
        status: String(d.status),
        steps: ((d.steps as { action: string; outcome?: { status: 'ok' | 'error' } | null }[] | null) ?? []).map((st) => ({
          action: st.action,
          outcome: st.outcome?.status ?? null,
        })),
        finishedAt: isoOrNull(d.finishedAt),
      };
  }
}

export async function timelinePage(
  db: Db,
  orgId: string,
  contactId: string,
  limit: number,
  cursor?: string,
): Promise<{ items: TimelineItem[]; nextCursor: string | null }> {
  let after: string[] | null = null;
  if (cursor !== undefined) {
    after = decodeCursor(cursor, 'createdAt', 'desc', KEYS);
    if (!after) throw contactErrors.invalidCursor();
  }
  const params: unknown[] = [];
  const branches = BRANCHES.map((b) => {
    params.push(contactId, orgId);
    let sql = b;
    if (after) {
      sql += ' and (x.created_at, x.id) < (?::timestamptz, ?::uuid)';
      params.push(...after);
    }
    params.push(limit + 1);
    return `(${sql} order by x.created_at desc, x.id desc limit ?)`;
  });
  const rows = await db.execute<Row[]>(
    `select t.kind, t.id, t.at, t.data, to_char(t.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as k0
     from (${branches.join(' union all ')}) t(kind, id, at, data)
     order by t.at desc, t.id desc limit ?`,
    [...params, limit + 1],
  );
  const more = rows.length > limit;
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items: items.map(toItem), nextCursor: more && last ? encodeCursor('createdAt', 'desc', [last.k0, last.id]) : null };
}

export async function getContactWithTimeline(
  db: Db,
  actor: InternalActor,
  id: string,
  timelineLimit: number,
): Promise<{ contact: AppContact; timeline: { items: TimelineItem[]; nextCursor: string | null } }> {
  const contact = await loadContact(db, actor.orgId, id);
  return { contact, timeline: await timelinePage(db, actor.orgId, id, timelineLimit) };
}

/** A further page of a live contact's timeline. */
export async function getTimeline(db: Db, actor: InternalActor, id: string, limit: number, cursor?: string) {
  await loadContact(db, actor.orgId, id);
  return timelinePage(db, actor.orgId, id, limit, cursor);
}
