import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type DB, type Db } from '@leadwire/db';
import type { Selectable } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { AppError, errors } from '../errors.ts';
import { emitEvents, type PendingEvent } from '../events/outbox.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { newestFirst, type PageParams } from '../records/pagination.ts';
import { getRecord, ifGiven, listRecords, qualified, requireRecord, type ById } from '../records/query.ts';
import type { DealCreateInput, DealListInput, DealUpdateInput, DealView } from './schemas.ts';

/** What a deal's view is made of; inserts and updates return the same columns the reads select. */
const DEAL_COLUMNS = [
  'id',
  'created_at',
  'updated_at',
  'contact_id',
  'pipeline_id',
  'stage_id',
  'title',
  'value_cents',
  'currency',
  'status',
  'closed_at',
] as const;
type DealRow = Pick<Selectable<DB['deals']>, (typeof DEAL_COLUMNS)[number]>;

/** Deals of a trashed contact are hidden with it and come back when it is restored. */
const visible = (orgId: string) =>
  qb
    .selectFrom('deals as d')
    .innerJoin('contacts as c', (j) => j.onRef('c.id', '=', 'd.contact_id').on('c.deleted_at', 'is', null))
    .where('d.organization_id', '=', orgId)
    .select(qualified('d', DEAL_COLUMNS));

const GET = statement<ById>()((p) => visible(p.orgId).where('d.id', '=', p.id));
const LOCK = statement<ById>()((p) => visible(p.orgId).where('d.id', '=', p.id).forUpdate('d'));

interface DealFilters {
  pipelineId: string | null;
  stageId: string | null;
  contactId: string | null;
  status: DealView['status'] | null;
}
const LIST = statement<DealFilters & PageParams>()((p) =>
  newestFirst(
    visible(p.orgId).where((eb) =>
      eb.and([
        ifGiven(eb, p.pipelineId, 'uuid', eb('d.pipeline_id', '=', p.pipelineId)),
        ifGiven(eb, p.stageId, 'uuid', eb('d.stage_id', '=', p.stageId)),
        ifGiven(eb, p.contactId, 'uuid', eb('d.contact_id', '=', p.contactId)),
        ifGiven(eb, p.status, 'text', eb('d.status', '=', p.status)),
      ]),
    ),
    'deals',
    'd',
    p,
  ),
);

/**
 * The pipeline, share-locked: pipeline administration (stage removal, deletion) locks it exclusively, so a deal never
 * lands on a stage that is being removed, nor on a pipeline being deleted (which would cascade the deal away).
 */
const LOCK_PIPELINE = statement<{ orgId: string; pipelineId: string | null }>()((p) =>
  qb
    .selectFrom('pipelines')
    .select('id')
    .where('organization_id', '=', p.orgId)
    .where((eb) =>
      eb
        .case()
        .when(sql<boolean>`${p.pipelineId}::uuid is null`)
        .then(eb.ref('is_default'))
        .else(eb('id', '=', p.pipelineId))
        .end(),
    )
    .forShare(),
);
const stages = () => qb.selectFrom('pipeline_stages').select(['id', 'name', 'pipeline_id']);
const STAGES = statement<{ pipelineId: string }>()((p) => stages().where('pipeline_id', '=', p.pipelineId).orderBy('position'));
const STAGE = statement<{ id: string }>()((p) => stages().where('id', '=', p.id));
type StageRow = NonNullable<(typeof STAGE)['row']>;

const INSERT = statement<{
  id: string;
  orgId: string;
  contactId: string;
  pipelineId: string;
  stageId: string;
  title: string;
  valueCents: number | null;
  currency: string;
  now: Date;
}>()((p) =>
  qb
    .insertInto('deals')
    .values({
      id: p.id,
      organization_id: p.orgId,
      contact_id: p.contactId,
      pipeline_id: p.pipelineId,
      stage_id: p.stageId,
      title: p.title,
      value_cents: p.valueCents,
      currency: p.currency,
      created_at: p.now,
      updated_at: p.now,
    })
    .returning(DEAL_COLUMNS),
);
const UPDATE = statement<{
  id: string;
  title: string;
  valueCents: number | null;
  currency: string;
  pipelineId: string;
  stageId: string;
  status: DealView['status'];
  closedAt: Date | null;
  now: Date;
}>()((p) =>
  qb
    .updateTable('deals')
    .set({
      title: p.title,
      value_cents: p.valueCents,
      currency: p.currency,
      pipeline_id: p.pipelineId,
      stage_id: p.stageId,
      status: p.status,
      closed_at: p.closedAt,
      updated_at: p.now,
    })
    .where('id', '=', p.id)
    .returning(DEAL_COLUMNS),
);

export const toDealView = (r: DealRow): DealView => ({
  id: r.id,
  contactId: r.contact_id,
  pipelineId: r.pipeline_id,
  stageId: r.stage_id,
  title: r.title,
  // bigint arrives as a string (pg's default, whatever the entity's type says); amounts stay below 2^53 (the input
  // schema's bound).
  valueCents: r.value_cents === null ? null : Number(r.value_cents),
  currency: r.currency,
  status: r.status,
  closedAt: isoOrNull(r.closed_at),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const stageNotInPipeline = (stageId: string, pipelineId: string) =>
  new AppError('stage_not_in_pipeline', `Stage ${stageId} is not a stage of pipeline ${pipelineId}`, { stageId, pipelineId });

/** The pipeline (default when `pipelineId` is null), share-locked, and the stage a deal goes to on it. */
async function placement(tx: Db, orgId: string, pipelineId: string | null, stageId: string | null): Promise<StageRow> {
  const [pipeline] = await tx.run(LOCK_PIPELINE, { orgId, pipelineId });
  if (!pipeline) {
    throw pipelineId
      ? errors.notFound(`No pipeline with id ${pipelineId}`)
      : new AppError('no_default_pipeline', 'Your organization has no default pipeline; pass pipelineId');
  }
  const onPipeline = await tx.run(STAGES, { pipelineId: pipeline.id });
  const stage = stageId ? onPipeline.find((s) => s.id === stageId) : onPipeline[0];
  if (stage) return stage;
  if (stageId) throw stageNotInPipeline(stageId, pipeline.id);
  throw new AppError('pipeline_has_no_stages', `Pipeline ${pipeline.id} has no stages; add one first`);
}

export function listDeals(db: Db, actor: InternalActor, q: DealListInput) {
  const filters = {
    pipelineId: q.pipelineId ?? null,
    stageId: q.stageId ?? null,
    contactId: q.contactId ?? null,
    status: q.status ?? null,
  };
  return listRecords(db, 'deals', LIST, actor.orgId, q, filters, toDealView);
}

export function getDeal(db: Db, actor: InternalActor, id: string): Promise<DealView> {
  return getRecord(db, GET, actor.orgId, id, 'deal', toDealView);
}

/** Emits deal.created with `data.deal`. */
export async function createDeal(db: Db, actor: InternalActor, input: DealCreateInput, now: Date): Promise<DealView> {
  return db.transaction(async (tx) => {
    await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    const stage = await placement(tx, actor.orgId, input.pipelineId ?? null, input.stageId ?? null);
    const [row] = await tx.run(INSERT, {
      id: randomUUID(),
      orgId: actor.orgId,
      contactId: input.contactId,
      pipelineId: stage.pipeline_id,
      stageId: stage.id,
      title: input.title,
      valueCents: input.valueCents ?? null,
      currency: input.currency ?? 'USD',
      now,
    });
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
    const cur = await requireRecord(tx, LOCK, actor.orgId, input.id, 'deal');

    const moving =
      (input.pipelineId !== undefined && input.pipelineId !== cur.pipeline_id) ||
      (input.stageId !== undefined && input.stageId !== cur.stage_id);
    const to = moving ? await placement(tx, actor.orgId, input.pipelineId ?? cur.pipeline_id, input.stageId ?? null) : null;

    const next = {
      title: input.title ?? cur.title,
      value_cents: input.valueCents === undefined ? cur.value_cents : input.valueCents,
      currency: input.currency ?? cur.currency,
      status: input.status ?? cur.status,
    };
    const changed = (['title', 'value_cents', 'currency', 'status'] as const).filter((k) => String(next[k]) !== String(cur[k]));
    if (!changed.length && !to) return toDealView(cur);

    const statusChanged = next.status !== cur.status;
    const closedAt = statusChanged ? (next.status === 'open' ? null : now) : cur.closed_at;
    const [row] = await tx.run(UPDATE, {
      id: cur.id,
      title: next.title,
      valueCents: next.value_cents,
      currency: next.currency,
      pipelineId: to?.pipeline_id ?? cur.pipeline_id,
      stageId: to?.id ?? cur.stage_id,
      status: next.status,
      closedAt,
      now,
    });
    const deal = toDealView(row!);
    const base = { orgId: actor.orgId, source: 'app' as const, at: now };
    const events: PendingEvent[] = [];

    const updatedFields = changed
      .filter((k) => k !== 'status' || next.status === 'open')
      .map((k) => (k === 'value_cents' ? 'valueCents' : k));
    if (updatedFields.length) events.push({ ...base, event: 'deal.updated', data: { deal, changed: updatedFields } });
    if (to) {
      const [from] = await tx.run(STAGE, { id: cur.stage_id });
      events.push({ ...base, event: 'deal.stage_changed', data: { deal, fromStage: from && stageRef(from), toStage: stageRef(to) } });
    }
    if (statusChanged && next.status !== 'open') events.push({ ...base, event: `deal.${next.status}`, data: { deal } });
    await emitEvents(tx, events);
    return deal;
  });
}
