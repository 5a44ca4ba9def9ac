import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type DB, type Db } from '@leadwire/db';
import type { Selectable } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { conflict } from '../conflict.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { newestFirst, type PageParams } from '../records/pagination.ts';
import { getRecord, ifGiven, listRecords, qualified, type ById } from '../records/query.ts';
import { emitEvents } from '../events/outbox.ts';
import type { AiActionCreateInput, AiActionListInput, AiActionView } from './schemas.ts';

/** What an AI action's view is made of; the insert and the decision return the same columns the reads select. */
const AI_ACTION_COLUMNS = [
  'id',
  'created_at',
  'contact_id',
  'kind',
  'summary',
  'payload',
  'status',
  'decided_by_id',
  'decided_at',
  'reason',
] as const;
type AiActionRow = Pick<Selectable<DB['ai_actions']>, (typeof AI_ACTION_COLUMNS)[number]>;

/** Suggestions about a trashed contact are hidden with it. */
const visible = (orgId: string) =>
  qb
    .selectFrom('ai_actions as a')
    .innerJoin('contacts as c', (j) => j.onRef('c.id', '=', 'a.contact_id').on('c.deleted_at', 'is', null))
    .where('a.organization_id', '=', orgId)
    .select(qualified('a', AI_ACTION_COLUMNS));

const GET = statement<ById>()((p) => visible(p.orgId).where('a.id', '=', p.id));

interface AiActionFilters {
  contactId: string | null;
  status: AiActionView['status'] | null;
}
const LIST = statement<AiActionFilters & PageParams>()((p) =>
  newestFirst(
    visible(p.orgId).where((eb) =>
      eb.and([
        ifGiven(eb, p.contactId, 'uuid', eb('a.contact_id', '=', p.contactId)),
        ifGiven(eb, p.status, 'text', eb('a.status', '=', p.status)),
      ]),
    ),
    'ai_actions',
    'a',
    p,
  ),
);
interface NewAiAction {
  id: string;
  orgId: string;
  contactId: string;
  kind: string;
  summary: string;
  /** JSON text. */
  payload: string;
  now: Date;
}
const INSERT = statement<NewAiAction>()((p) =>
  qb
    .insertInto('ai_actions')
    .values({
      id: p.id,
      organization_id: p.orgId,
      contact_id: p.contactId,
      kind: p.kind,
      summary: p.summary,
      payload: sql<Record<string, unknown>>`${p.payload}::jsonb`,
      created_at: p.now,
    })
    .returning(AI_ACTION_COLUMNS),
);
/** Only a pending action is decided: of two concurrent decisions, the second finds it decided and is refused. */
interface Decision extends ById {
  status: 'approved' | 'rejected';
  userId: string;
  reason: string | null;
  now: Date;
}
const DECIDE = statement<Decision>()((p) =>
  qb
    .updateTable('ai_actions as a')
    .set({ status: p.status, decided_by_id: p.userId, decided_at: p.now, reason: p.reason })
    .where('a.id', '=', p.id)
    .where('a.organization_id', '=', p.orgId)
    .where('a.status', '=', sql.lit('pending'))
    .where((eb) =>
      eb.exists(
        eb.selectFrom('contacts as c').select(eb.lit(1).as('one')).whereRef('c.id', '=', 'a.contact_id').where('c.deleted_at', 'is', null),
      ),
    )
    .returning(qualified('a', AI_ACTION_COLUMNS)),
);

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

export function listAiActions(db: Db, actor: InternalActor, q: AiActionListInput) {
  return listRecords(db, 'ai_actions', LIST, actor.orgId, q, { contactId: q.contactId ?? null, status: q.status ?? null }, toView);
}

export function getAiAction(db: Db, actor: InternalActor, id: string): Promise<AiActionView> {
  return getRecord(db, GET, actor.orgId, id, 'AI action', toView);
}

/** A suggestion, pending until a user decides. Emits ai_action.created with source `ai` and `data.aiAction`. */
export async function createAiAction(db: Db, actor: InternalActor, input: AiActionCreateInput, now: Date): Promise<AiActionView> {
  return db.transaction(async (tx) => {
    await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    const [row] = await tx.run(INSERT, {
      id: randomUUID(),
      orgId: actor.orgId,
      contactId: input.contactId,
      kind: input.kind,
      summary: input.summary,
      payload: JSON.stringify(input.payload ?? {}),
      now,
    });
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
    const [row] = await tx.run(DECIDE, { status: decision, userId: actor.userId, now, reason, id, orgId: actor.orgId });
    if (!row) {
      const current = await getAiAction(tx, actor, id);
      throw conflict('ai_action_already_decided', `This AI action was already ${current.status}`, { status: current.status });
    }
    const aiAction = toView(row);
    await emitEvents(tx, [{ orgId: actor.orgId, event: `ai_action.${decision}`, source: 'app', data: { aiAction }, at: now }]);
    return aiAction;
  });
}
