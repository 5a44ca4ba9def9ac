import { randomUUID } from 'node:crypto';
import { columnList, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { AppError, errors } from '../errors.ts';
import { emitEvents, type PendingEvent } from '../events/outbox.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { afterCursor, toPage } from '../records/pagination.ts';
import type { DealCreateInput, DealListInput, DealUpdateInput, DealView } from './schemas.ts';

interface DealRow {
  id: string;
  organization_id: string;
  contact_id: string;
  pipeline_id: string;
  stage_id: string;
  title: string;
  value_cents: string | number | null;
  currency: string;
  status: DealView['status'];
  closed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface StageRow {
  id: string;
  name: string;
  pipeline_id: string;
}

const COLUMNS = ['id', 'created_at', 'updated_at', 'organization_id', 'contact_id', 'pipeline_id', 'stage_id', 'title', 'value_cents', 'currency', 'status', 'closed_at'];

/** Deals of a trashed contact are hidden with it and come back when it is restored. */
const VISIBLE = `from deals d join contacts c on c.id = d.contact_id and c.deleted_at is null where d.organization_id = ?`;
const GET = `select ${columnList(COLUMNS, 'd')} ${VISIBLE} and d.id = ?`;
const LOCK = `select ${columnList(COLUMNS, 'd')} ${VISIBLE} and d.id = ? for update of d`;
const LIST = `
select ${columnList(COLUMNS, 'd')} ${VISIBLE}
  and (?::uuid is null or d.pipeline_id = ?) and (?::uuid is null or d.stage_id = ?)
  and (?::uuid is null or d.contact_id = ?) and (?::text is null or d.status = ?)
  and ${afterCursor('d', 'deals')}
order by d.created_at desc, d.id desc
limit ?`;

/**
 * The pipeline, share-locked: pipeline administration (stage removal, deletion) locks it exclusively, so a deal never
 * lands on a stage that is being removed, nor on a pipeline being deleted (which would cascade the deal away).
 */
const LOCK_PIPELINE = `
select id from pipelines where organization_id = ? and (case when ?::uuid is null then is_default else id = ? end)
for share`;
const STAGES = `select id, name, pipeline_id from pipeline_stages where pipeline_id = ? order by position`;
const STAGE = `select id, name, pipeline_id from pipeline_stages where id = ?`;
const INSERT = `
insert into deals (id, organization_id, contact_id, pipeline_id, stage_id, title, value_cents, currency, created_at, updated_at)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
returning ${columnList(COLUMNS)}`;
const UPDATE = `
update deals set title = ?, value_cents = ?, currency = ?, pipeline_id = ?, stage_id = ?, status = ?, closed_at = ?,
  updated_at = ?
where id = ?
returning ${columnList(COLUMNS)}`;

export const toDealView = (r: DealRow): DealView => ({
  id: r.id,
  contactId: r.contact_id,
  pipelineId: r.pipeline_id,
  stageId: r.stage_id,
  title: r.title,
  // bigint arrives as a string; amounts stay below 2^53 (the input schema's bound).
  valueCents: r.value_cents === null ? null : Number(r.value_cents),
  currency: r.currency,
  status: r.status,
  closedAt: isoOrNull(r.closed_at),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const stageNotInPipeline = (stageId: string, pipelineId: string) =>
  new AppError(422, 'stage_not_in_pipeline', `Stage ${stageId} is not a stage of pipeline ${pipelineId}`, { stageId, pipelineId });

/** The pipeline (default when `pipelineId` is null), share-locked, and the stage a deal goes to on it. */
async function placement(tx: Db, orgId: string, pipelineId: string | null, stageId: string | null): Promise<StageRow> {
  const [pipeline] = await tx.execute<{ id: string }[]>(LOCK_PIPELINE, [orgId, pipelineId, pipelineId]);
  if (!pipeline) {
    throw pipelineId
      ? errors.notFound(`No pipeline with id ${pipelineId}`)
      : new AppError(422, 'no_default_pipeline', 'Your organization has no default pipeline; pass pipelineId');
  }
  const stages = await tx.execute<StageRow[]>(STAGES, [pipeline.id]);
  const stage = stageId ? stages.find((s) => s.id === stageId) : stages[0];
  if (stage) return stage;
  if (stageId) throw stageNotInPipeline(stageId, pipeline.id);
  throw new AppError(422, 'pipeline_has_no_stages', `Pipeline ${pipeline.id} has no stages; add one first`);
}

export async function listDeals(db: Db, actor: InternalActor, q: DealListInput) {
  const rows = await db.execute<DealRow[]>(LIST, [
    actor.orgId,
    q.pipelineId ?? null, q.pipelineId ?? null,
    q.stageId ?? null, q.stageId ?? null,
    q.contactId ?? null, q.contactId ?? null,
    q.status ?? null, q.status ?? null,
    q.cursor ?? null, q.cursor ?? null, actor.orgId,
    q.limit + 1,
  ]);
  return toPage(rows, q.limit, toDealView);
}

export async function getDeal(db: Db, actor: InternalActor, id: string): Promise<DealView> {
  const [row] = await db.execute<DealRow[]>(GET, [actor.orgId, id]);
  if (!row) throw errors.notFound(`No deal with id ${id}`);
  return toDealView(row);
}

/** Emits deal.created with `data.deal`. */
export async function createDeal(db: Db, actor: InternalActor, input: DealCreateInput, now: Date): Promise<DealView> {
  return db.transaction(async (tx) => {
    await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    const stage = await placement(tx, actor.orgId, input.pipelineId ?? null, input.stageId ?? null);
    const [row] = await tx.execute<DealRow[]>(INSERT, [
      randomUUID(),
      actor.orgId,
      input.contactId,
      stage.pipeline_id,
      stage.id,
      input.title,
      input.valueCents ?? null,
      input.currency ?? 'USD',
      now,
      now,
    ]);
    const deal = toDealView(row!);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'deal.created', source: actor.eventSource ?? 'app', data: { deal }, at: now }]);
    return deal;
  });
}

const stageRef = (s: StageRow) => ({ id: s.id, name: s.name, pipelineId: s.pipeline_id });

/**
 * Applies what was sent and emits one event per kind of change, all with `data.deal` (the deal after the change):
 * deal.updated for title, value, currency or a reopening (`data.changed` names the fields), deal.stage_changed for a
 * move (`data.fromStage`, `data.toStage`: id, name, pipelineId), deal.won / deal.lost when it closes. Nothing changed,
 * nothing emitted.
 */
export async function updateDeal(db: Db, actor: InternalActor, input: DealUpdateInput, now: Date): Promise<DealView> {
  return db.transaction(async (tx) => {
    const [cur] = await tx.execute<DealRow[]>(LOCK, [actor.orgId, input.id]);
    if (!cur) throw errors.notFound(`No deal with id ${input.id}`);

    const moving = (input.pipelineId !== undefined && input.pipelineId !== cur.pipeline_id) ||
      (input.stageId !== undefined && input.stageId !== cur.stage_id);
    const to = moving ? await placement(tx, actor.orgId, input.pipelineId ?? cur.pipeline_id, input.stageId ?? null) : null;

    const next = {
      title: input.title ?? cur.title,
      value_cents: input.valueCents === undefined ? cur.value_cents : input.valueCents,
      currency: input.currency ?? cur.currency,
      status: input.status ?? cur.status,
    };
    const changed = (['title', 'value_cents', 'currency', 'status'] as const).filter(
      (k) => String(next[k]) !== String(cur[k]),
    );
    if (!changed.length && !to) return toDealView(cur);

    const statusChanged = next.status !== cur.status;
    const closedAt = statusChanged ? (next.status === 'open' ? null : now) : cur.closed_at;
    const [row] = await tx.execute<DealRow[]>(UPDATE, [
      next.title, next.value_cents, next.currency, to?.pipeline_id ?? cur.pipeline_id, to?.id ?? cur.stage_id,
      next.status, closedAt, now, cur.id,
    ]);
    const deal = toDealView(row!);
    const base = { orgId: actor.orgId, source: 'app' as const, at: now };
    const events: PendingEvent[] = [];

    const updatedFields = changed
      .filter((k) => k !== 'status' || next.status === 'open')
      .map((k) => (k === 'value_cents' ? 'valueCents' : k));
    if (updatedFields.length) events.push({ ...base, event: 'deal.updated', data: { deal, changed: updatedFields } });
    if (to) {
      const [from] = await tx.execute<StageRow[]>(STAGE, [cur.stage_id]);
      events.push({ ...base, event: 'deal.stage_changed', data: { deal, fromStage: from && stageRef(from), toStage: stageRef(to) } });
    }
    if (statusChanged && next.status !== 'open') events.push({ ...base, event: `deal.${next.status}`, data: { deal } });
    await emitEvents(tx, events);
    return deal;
  });
}
