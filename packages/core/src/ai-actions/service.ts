import { randomUUID } from 'node:crypto';
import { columnList, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { conflict } from '../conflict.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { afterCursor, toPage } from '../records/pagination.ts';
import { errors } from '../errors.ts';
import { emitEvents } from '../events/outbox.ts';
import type { AiActionCreateInput, AiActionListInput, AiActionView } from './schemas.ts';

interface AiActionRow {
  id: string;
  contact_id: string;
  kind: string;
  summary: string;
  payload: Record<string, unknown>;
  status: AiActionView['status'];
  decided_by_id: string | null;
  decided_at: Date | null;
  reason: string | null;
  created_at: Date;
}

const COLUMNS = ['id', 'created_at', 'organization_id', 'contact_id', 'kind', 'summary', 'payload', 'status', 'decided_by_id', 'decided_at', 'reason'];

/** Suggestions about a trashed contact are hidden with it. */
const VISIBLE = `from ai_actions a join contacts c on c.id = a.contact_id and c.deleted_at is null where a.organization_id = ?`;
const GET = `select ${columnList(COLUMNS, 'a')} ${VISIBLE} and a.id = ?`;
const LIST = `
select ${columnList(COLUMNS, 'a')} ${VISIBLE}
  and (?::uuid is null or a.contact_id = ?) and (?::text is null or a.status = ?)
  and ${afterCursor('a', 'ai_actions')}
order by a.created_at desc, a.id desc
limit ?`;
const INSERT = `
insert into ai_actions (id, organization_id, contact_id, kind, summary, payload, created_at) values (?, ?, ?, ?, ?, ?::jsonb, ?)
returning ${columnList(COLUMNS)}`;
/** Only a pending action is decided: of two concurrent decisions, the second finds it decided and is refused. */
const DECIDE = `
update ai_actions a set status = ?, decided_by_id = ?, decided_at = ?, reason = ?
where a.id = ? and a.organization_id = ? and a.status = 'pending'
  and exists (select 1 from contacts c where c.id = a.contact_id and c.deleted_at is null)
returning ${columnList(COLUMNS, 'a')}`;

const toView = (r: AiActionRow): AiActionView => ({
  id: r.id,
  contactId: r.contact_id,
  kind: r.kind,
  summary: r.summary,
  payload: r.payload,
  status: r.status,
  decidedBy: r.decided_by_id,
  decidedAt: isoOrNull(r.decided_at),
  reason: r.reason,
  createdAt: iso(r.created_at),
});

export async function listAiActions(db: Db, actor: InternalActor, q: AiActionListInput) {
  const rows = await db.execute<AiActionRow[]>(LIST, [
    actor.orgId,
    q.contactId ?? null, q.contactId ?? null,
    q.status ?? null, q.status ?? null,
    q.cursor ?? null, q.cursor ?? null, actor.orgId,
    q.limit + 1,
  ]);
  return toPage(rows, q.limit, toView);
}

export async function getAiAction(db: Db, actor: InternalActor, id: string): Promise<AiActionView> {
  const [row] = await db.execute<AiActionRow[]>(GET, [actor.orgId, id]);
  if (!row) throw errors.notFound(`No AI action with id ${id}`);
  return toView(row);
}

/** A suggestion, pending until a user decides. Emits ai_action.created with source `ai` and `data.aiAction`. */
export async function createAiAction(db: Db, actor: InternalActor, input: AiActionCreateInput, now: Date): Promise<AiActionView> {
  return db.transaction(async (tx) => {
    await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    const [row] = await tx.execute<AiActionRow[]>(INSERT, [
      randomUUID(),
      actor.orgId,
      input.contactId,
      input.kind,
      input.summary,
      JSON.stringify(input.payload ?? {}),
      now,
    ]);
    const aiAction = toView(row!);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'ai_action.created', source: 'ai', data: { aiAction }, at: now }]);
    return aiAction;
  });
}

/**
 * Records the user's decision and emits ai_action.approved or ai_action.rejected (source `app`). A decision is final:
 * deciding again, either way, is 409 `ai_action_already_decided`. Carrying the action out is left to whoever
 * listens for the approval.
 */
export async function decideAiAction(
  db: Db,
  actor: InternalActor,
  id: string,
  decision: 'approved' | 'rejected',
  reason: string | null,
  now: Date,
): Promise<AiActionView> {
  return db.transaction(async (tx) => {
    const [row] = await tx.execute<AiActionRow[]>(DECIDE, [decision, actor.userId, now, reason, id, actor.orgId]);
    if (!row) {
      const current = await getAiAction(tx, actor, id);
      throw conflict('ai_action_already_decided', `This AI action was already ${current.status}`, { status: current.status });
    }
    const aiAction = toView(row);
    await emitEvents(tx, [{ orgId: actor.orgId, event: `ai_action.${decision}`, source: 'app', data: { aiAction }, at: now }]);
    return aiAction;
  });
}
