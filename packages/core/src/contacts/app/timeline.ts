import { type Db, type Expression, qb, sql, statement } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { contactErrors } from './errors.ts';
import { decodeCursor, encodeCursor, type SortKey } from './cursor.ts';
import { iso } from '../../records/dates.ts';
import type { AppContactDetail, TimelineItem } from './schemas.ts';
import { loadContact, loadContactDetail } from './write.ts';

interface TimelineParams {
  contactId: string;
  orgId: string;
  /** The page size plus one: the extra row says whether there is a next page. */
  limit: number;
  /** The cursor's (at, id), on later pages. */
  at: string;
  id: string;
}

const kind = (k: TimelineItem['kind']) => sql.lit(k).$castTo<TimelineItem['kind']>().as('kind');
const data = (fields: Expression<unknown>) => sql<Record<string, unknown>>`jsonb_build_object(${fields})`.as('data');

/**
 * A branch's rows of the contact, newest first, cut to the page: `x` is the branch's table (its `created_at` and `id`
 * give the order), `contact` says how the branch names the contact, and later pages start strictly after the cursor.
 */
interface Scoped {
  at: Expression<unknown>;
  id: Expression<unknown>;
  org: Expression<unknown>;
  /** The condition "this row is about the contact". */
  contact: Expression<unknown>;
}

function within(p: TimelineParams, after: boolean, x: Scoped) {
  const cursor = after ? sql` and (${x.at}, ${x.id}) < (${p.at}::timestamptz, ${p.id}::uuid)` : sql``;
  return sql<boolean>`${x.contact} and ${x.org} = ${p.orgId}${cursor}`;
}

/**
 * What happened to a contact, newest first: its notes, the events emitted about it, its deals, tasks, messages, form
 * submissions, page views, custom website events and workflow runs.
 * Each source is a branch `(kind, id, at, data)`; every branch is cut to the page size on its own before the union is,
 * so a page reads at most `limit + 1` rows per source whatever the contact's history holds.
 */
function branches(p: TimelineParams, after: boolean) {
  const scope = (x: Scoped) => within(p, after, x);
  const of = (contactId: Expression<unknown>) => sql`${contactId} = ${p.contactId}`;
  return [
    qb
      .selectFrom('notes as x')
      .select((eb) => [
        kind('note'),
        'x.id',
        'x.created_at as at',
        data(sql`'body', ${eb.ref('x.body')}, 'authorId', ${eb.ref('x.author_id')}`),
      ])
      .where((eb) =>
        scope({ at: eb.ref('x.created_at'), id: eb.ref('x.id'), org: eb.ref('x.organization_id'), contact: of(eb.ref('x.contact_id')) }),
      ),
    // Events name their contact inside the payload (spec: data.contact.id); the organization filter narrows the scan.
    qb
      .selectFrom('outbox_events as x')
      .select((eb) => [
        kind('event'),
        'x.id',
        'x.created_at as at',
        data(sql`'event', ${eb.ref('x.event')}, 'source', ${eb.ref('x.payload')}->>'source'`),
      ])
      .where((eb) =>
        scope({
          at: eb.ref('x.created_at'),
          id: eb.ref('x.id'),
          org: eb.ref('x.organization_id'),
          contact: sql`${eb.ref('x.payload')}->'data'->'contact'->>'id' = ${p.contactId}::text`,
        }),
      )
      .where('x.event', '<>', sql.lit('tracking.page_visited'))
      .where('x.event', '<>', sql.lit('tracking.custom_event')),
    qb
      .selectFrom('deals as x')
      .leftJoin('pipeline_stages as s', 's.id', 'x.stage_id')
      .select((eb) => [
        kind('deal'),
        'x.id',
        'x.created_at as at',
        data(
          sql`'title', ${eb.ref('x.title')}, 'status', ${eb.ref('x.status')}, 'valueCents', ${eb.ref('x.value_cents')}, 'currency', ${eb.ref('x.currency')}, 'stage', ${eb.ref('s.name')}`,
        ),
      ])
      .where((eb) =>
        scope({ at: eb.ref('x.created_at'), id: eb.ref('x.id'), org: eb.ref('x.organization_id'), contact: of(eb.ref('x.contact_id')) }),
      ),
    qb
      .selectFrom('tasks as x')
      .select((eb) => [
        kind('task'),
        'x.id',
        'x.created_at as at',
        data(sql`'title', ${eb.ref('x.title')}, 'dueAt', ${eb.ref('x.due_at')}, 'completedAt', ${eb.ref('x.completed_at')}`),
      ])
      .where((eb) =>
        scope({ at: eb.ref('x.created_at'), id: eb.ref('x.id'), org: eb.ref('x.organization_id'), contact: of(eb.ref('x.contact_id')) }),
      ),
    qb
      .selectFrom('messages as x')
      .select((eb) => [
        kind('message'),
        'x.id',
        'x.created_at as at',
        data(
          sql`'direction', ${eb.ref('x.direction')}, 'channel', ${eb.ref('x.channel')}, 'body', ${eb.ref('x.body')}, 'status', ${eb.ref('x.status')}`,
        ),
      ])
      .where((eb) =>
        scope({ at: eb.ref('x.created_at'), id: eb.ref('x.id'), org: eb.ref('x.organization_id'), contact: of(eb.ref('x.contact_id')) }),
      ),
    qb
      .selectFrom('form_submissions as x')
      .select((eb) => [
        kind('form_submission'),
        'x.id',
        'x.created_at as at',
        data(
          sql`'formId', ${eb.ref('x.form_id')}, 'formName', ${eb.ref('x.form_name')}, 'answers', ${eb.ref('x.answers')}, 'attribution', ${eb.ref('x.attribution')}`,
        ),
      ])
      .where((eb) =>
        scope({ at: eb.ref('x.created_at'), id: eb.ref('x.id'), org: eb.ref('x.organization_id'), contact: of(eb.ref('x.contact_id')) }),
      ),
    // Page views stand for their tracking.page_visited events, and include the views made before the visitor was known.
    qb
      .selectFrom('page_views as x')
      .select((eb) => [
        kind('page_view'),
        'x.id',
        'x.created_at as at',
        data(sql`'url', ${eb.ref('x.url')}, 'title', ${eb.ref('x.title')}, 'referrer', ${eb.ref('x.referrer')}`),
      ])
      .where((eb) =>
        scope({ at: eb.ref('x.created_at'), id: eb.ref('x.id'), org: eb.ref('x.organization_id'), contact: of(eb.ref('x.contact_id')) }),
      ),
    // Custom website events stand for their tracking.custom_event events, and include those made before the visitor was known.
    qb
      .selectFrom('tracking_events as x')
      .select((eb) => [
        kind('custom_event'),
        'x.id',
        'x.created_at as at',
        data(sql`'name', ${eb.ref('x.name')}, 'props', ${eb.ref('x.props')}, 'url', ${eb.ref('x.url')}`),
      ])
      .where((eb) =>
        scope({ at: eb.ref('x.created_at'), id: eb.ref('x.id'), org: eb.ref('x.organization_id'), contact: of(eb.ref('x.contact_id')) }),
      ),
    qb
      .selectFrom('workflow_runs as x')
      .select((eb) => [
        kind('workflow_run'),
        'x.id',
        'x.created_at as at',
        data(
          sql`'workflowId', ${eb.ref('x.workflow_id')}, 'workflowName', ${eb.ref('x.workflow')}, 'status', ${eb.ref('x.status')}, 'steps', ${eb.ref('x.steps')}, 'finishedAt', ${eb.ref('x.finished_at')}`,
        ),
      ])
      .where((eb) =>
        scope({ at: eb.ref('x.created_at'), id: eb.ref('x.id'), org: eb.ref('x.organization_id'), contact: of(eb.ref('x.contact_id')) }),
      ),
  ].map((b) => b.orderBy('x.created_at', 'desc').orderBy('x.id', 'desc').limit(p.limit));
}

/** A row of any branch. */
type Row = Awaited<ReturnType<ReturnType<typeof branches>[number]['execute']>>[number];

/** One page of the union, cut again, with the last row's key as exact text for the cursor. */
const timeline = (after: boolean) =>
  statement<TimelineParams>()((p) =>
    qb
      .selectFrom(sql<Row>`(${sql.join(branches(p, after), sql` union all `)})`.as<'t'>(sql`t(kind, id, at, data)`))
      .select(['t.kind', 't.id', 't.at', 't.data'])
      .select((eb) => sql<string>`to_char(${eb.ref('t.at')} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('k0'))
      .orderBy('t.at', 'desc')
      .orderBy('t.id', 'desc')
      .limit(p.limit),
  );

const FIRST_PAGE = timeline(false);
const LATER_PAGE = timeline(true);

const KEYS: Pick<SortKey, 'type'>[] = [{ type: 'timestamptz' }, { type: 'uuid' }];

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
      return {
        kind: 'page_view',
        ...base,
        url: String(d.url),
        title: (d.title as string | null) ?? null,
        referrer: (d.referrer as string | null) ?? null,
      };
    case 'custom_event':
      return {
        kind: 'custom_event',
        ...base,
        name: String(d.name),
        props: (d.props ?? {}) as Record<string, string | number | boolean | null>,
        url: String(d.url),
      };
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
    after = decodeCursor(cursor, 'timeline', 'createdAt', 'desc', KEYS);
    if (!after) throw contactErrors.invalidCursor();
  }
  const params = { contactId, orgId, limit: limit + 1, at: after?.[0] ?? '', id: after?.[1] ?? '' };
  const rows = await db.run(after ? LATER_PAGE : FIRST_PAGE, params);
  const more = rows.length > limit;
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items: items.map(toItem), nextCursor: more && last ? encodeCursor('timeline', 'createdAt', 'desc', [last.k0, last.id]) : null };
}

export async function getContactWithTimeline(
  db: Db,
  actor: InternalActor,
  id: string,
  timelineLimit: number,
  now: Date,
): Promise<{ contact: AppContactDetail; timeline: { items: TimelineItem[]; nextCursor: string | null } }> {
  const contact = await loadContactDetail(db, actor.orgId, id, now);
  return { contact, timeline: await timelinePage(db, actor.orgId, id, timelineLimit) };
}

/** A further page of a live contact's timeline. */
export async function getTimeline(db: Db, actor: InternalActor, id: string, limit: number, cursor?: string) {
  await loadContact(db, actor.orgId, id);
  return timelinePage(db, actor.orgId, id, limit, cursor);
}
