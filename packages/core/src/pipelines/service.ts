import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { conflict } from '../conflict.ts';
import { iso } from '../records/dates.ts';
import { AppError, errors } from '../errors.ts';
import { MAX_STAGES, type PipelineCreateInput, type PipelineView, type StageAddInput, type StageView } from './schemas.ts';

interface PipelineRow {
  id: string;
  name: string;
  is_default: boolean;
  created_at: Date;
  stages: StageView[];
}

const SELECT_PIPELINES = `
select p.id, p.name, p.is_default, p.created_at,
  coalesce((select json_agg(json_build_object('id', s.id, 'name', s.name, 'position', s.position) order by s.position)
            from pipeline_stages s where s.pipeline_id = p.id), '[]') as stages
from pipelines p
where p.organization_id = ? and (?::uuid is null or p.id = ?)
order by p.is_default desc, p.created_at, p.id`;

/**
 * Every change to an organization's pipelines takes this lock first, so name checks, the one-default rule and stage
 * positions are decided one change at a time. Deal writes do not take it; they share-lock the pipeline row instead.
 */
const LOCK_ORG_PIPELINES = `select pg_advisory_xact_lock(hashtextextended('pipelines:' || ?, 0))`;
const LOCK_PIPELINE = `select id, name, is_default from pipelines where id = ? and organization_id = ? for update`;
const NAME_TAKEN = `select 1 from pipelines where organization_id = ? and lower(name) = lower(?) and id <> ?`;
const HAS_DEFAULT = `select 1 from pipelines where organization_id = ? and is_default`;
// Two statements, cleared before set: the partial unique index `pipelines_one_default` is checked row by row.
const CLEAR_DEFAULT = `update pipelines set is_default = false where organization_id = ? and is_default and id <> ?`;
const SET_DEFAULT = `update pipelines set is_default = true where id = ?`;
const INSERT_PIPELINE = `insert into pipelines (id, organization_id, name, is_default, created_at) values (?, ?, ?, ?, ?)`;
const INSERT_STAGES = `
insert into pipeline_stages (id, organization_id, pipeline_id, name, position)
select gen_random_uuid(), ?, ?, v.name, v.ord - 1 + ?
from jsonb_array_elements_text(?::jsonb) with ordinality as v(name, ord)`;
const INSERT_STAGE = `insert into pipeline_stages (id, organization_id, pipeline_id, name, position) values (?, ?, ?, ?, ?)`;
const PROMOTE_OLDEST = `
update pipelines set is_default = true
where id = (select id from pipelines where organization_id = ? order by created_at, id limit 1)`;
const RENAME_PIPELINE = `update pipelines set name = ? where id = ?`;
const DELETE_PIPELINE = `delete from pipelines where id = ?`;
const STAGES = `select id, name, position from pipeline_stages where pipeline_id = ? order by position`;
const RENAME_STAGE = `update pipeline_stages set name = ? where id = ?`;
const DELETE_STAGE = `delete from pipeline_stages where id = ?`;
const DEALS_ON = `select count(*)::int as n from deals where pipeline_id = ? and (?::uuid is null or stage_id = ?)`;
const PLACEMENTS_ON_STAGE = `select count(*)::int as n from pipeline_items where stage_id = ?`;
const MOVE_PLACEMENTS = `update pipeline_items set stage_id = ? where stage_id = ?`;
// Positions are unique per pipeline and checked row by row, so a new order goes through negative values first.
const PARK_POSITIONS = `update pipeline_stages set position = -1 - position where pipeline_id = ?`;
const APPLY_ORDER = `
update pipeline_stages s set position = v.ord - 1
from jsonb_array_elements_text(?::jsonb) with ordinality as v(id, ord)
where s.id = v.id::uuid and s.pipeline_id = ?`;

const toView = (r: PipelineRow): PipelineView => ({
  id: r.id,
  name: r.name,
  isDefault: r.is_default,
  createdAt: iso(r.created_at),
  stages: r.stages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
});

export async function listPipelines(db: Db, actor: InternalActor): Promise<{ items: PipelineView[] }> {
  const rows = await db.execute<PipelineRow[]>(SELECT_PIPELINES, [actor.orgId, null, null]);
  return { items: rows.map(toView) };
}

export async function getPipeline(db: Db, actor: InternalActor, id: string): Promise<PipelineView> {
  const [row] = await db.execute<PipelineRow[]>(SELECT_PIPELINES, [actor.orgId, id, id]);
  if (!row) throw errors.notFound(`No pipeline with id ${id}`);
  return toView(row);
}

/** Pipeline administration: owners and admins, one change per organization at a time, returning the new state. */
async function administer(
  db: Db,
  actor: InternalActor,
  pipelineId: string | null,
  fn: (tx: Db, pipeline: { id: string; name: string; is_default: boolean } | null) => Promise<string | void>,
): Promise<string> {
  requireRole(actor, 'owner', 'admin');
  return db.transaction(async (tx) => {
    await tx.execute(LOCK_ORG_PIPELINES, [actor.orgId]);
    let pipeline = null;
    if (pipelineId) {
      [pipeline] = await tx.execute<{ id: string; name: string; is_default: boolean }[]>(LOCK_PIPELINE, [pipelineId, actor.orgId]);
      if (!pipeline) throw errors.notFound(`No pipeline with id ${pipelineId}`);
    }
    return (await fn(tx, pipeline ?? null)) ?? pipelineId!;
  });
}

async function assertNameFree(tx: Db, orgId: string, name: string, exceptId: string) {
  const [taken] = await tx.execute(NAME_TAKEN, [orgId, name, exceptId]);
  if (taken) throw conflict('pipeline_name_taken', `A pipeline named "${name}" already exists in your organization`);
}

function assertStageNamesFree(existing: readonly StageView[], names: readonly string[]) {
  const seen = new Set(existing.map((s) => s.name.toLowerCase()));
  for (const name of names) {
    if (seen.has(name.toLowerCase())) throw conflict('stage_name_taken', `The pipeline already has a stage named "${name}"`);
    seen.add(name.toLowerCase());
  }
}

async function stagesOf(tx: Db, pipelineId: string): Promise<StageView[]> {
  return tx.execute<StageView[]>(STAGES, [pipelineId]);
}

function stageIn(stages: readonly StageView[], pipelineId: string, stageId: string): StageView {
  const stage = stages.find((s) => s.id === stageId);
  if (!stage) throw errors.notFound(`No stage ${stageId} in pipeline ${pipelineId}`);
  return stage;
}

async function applyOrder(tx: Db, pipelineId: string, ids: readonly string[]) {
  await tx.execute(PARK_POSITIONS, [pipelineId]);
  await tx.execute(APPLY_ORDER, [JSON.stringify(ids), pipelineId]);
}

/** The first pipeline of an organization becomes its default, so leads always have somewhere to land. */
export async function createPipeline(db: Db, actor: InternalActor, input: PipelineCreateInput, now: Date): Promise<PipelineView> {
  const id = await administer(db, actor, null, async (tx) => {
    const id = randomUUID();
    await assertNameFree(tx, actor.orgId, input.name, id);
    const stages = input.stages ?? [];
    assertStageNamesFree([], stages);
    const [hasDefault] = await tx.execute(HAS_DEFAULT, [actor.orgId]);
    const makeDefault = input.isDefault === true || !hasDefault;
    if (makeDefault) await tx.execute(CLEAR_DEFAULT, [actor.orgId, id]);
    await tx.execute(INSERT_PIPELINE, [id, actor.orgId, input.name, makeDefault, now]);
    if (stages.length) await tx.execute(INSERT_STAGES, [actor.orgId, id, 0, JSON.stringify(stages)]);
    return id;
  });
  return getPipeline(db, actor, id);
}

export async function renamePipeline(db: Db, actor: InternalActor, id: string, name: string): Promise<PipelineView> {
  await administer(db, actor, id, async (tx) => {
    await assertNameFree(tx, actor.orgId, name, id);
    await tx.execute(RENAME_PIPELINE, [name, id]);
  });
  return getPipeline(db, actor, id);
}

/** Clearing the old default and setting the new one commit together: readers see exactly one default throughout. */
export async function setDefaultPipeline(db: Db, actor: InternalActor, id: string): Promise<PipelineView> {
  await administer(db, actor, id, async (tx) => {
    await tx.execute(CLEAR_DEFAULT, [actor.orgId, id]);
    await tx.execute(SET_DEFAULT, [id]);
  });
  return getPipeline(db, actor, id);
}

/**
 * Refused while deals are on the pipeline (the database would cascade them away): move them to another pipeline
 * first. Lead placements go with the pipeline; the contacts themselves stay. Deleting the default makes the oldest
 * remaining pipeline the default, so an organization with pipelines always has one.
 */
export async function deletePipeline(db: Db, actor: InternalActor, id: string) {
  await administer(db, actor, id, async (tx, pipeline) => {
    const [deals] = await tx.execute<{ n: number }[]>(DEALS_ON, [id, null, null]);
    if (deals && deals.n > 0) {
      throw conflict(
        'pipeline_has_deals',
        `Pipeline "${pipeline!.name}" still has ${deals.n} deal(s); move them to another pipeline before deleting it`,
        { deals: deals.n },
      );
    }
    await tx.execute(DELETE_PIPELINE, [id]);
    if (pipeline!.is_default) await tx.execute(PROMOTE_OLDEST, [actor.orgId]);
  });
  return { id, deleted: true as const };
}

export async function addStage(db: Db, actor: InternalActor, input: StageAddInput): Promise<PipelineView> {
  await administer(db, actor, input.id, async (tx) => {
    const stages = await stagesOf(tx, input.id);
    if (stages.length >= MAX_STAGES) {
      throw new AppError(422, 'stage_limit_reached', `A pipeline holds at most ${MAX_STAGES} stages`);
    }
    assertStageNamesFree(stages, [input.name]);
    const stageId = randomUUID();
    await tx.execute(INSERT_STAGE, [stageId, actor.orgId, input.id, input.name, (stages.at(-1)?.position ?? -1) + 1]);
    const ids = stages.map((s) => s.id);
    ids.splice(input.position ?? ids.length, 0, stageId);
    await applyOrder(tx, input.id, ids);
  });
  return getPipeline(db, actor, input.id);
}

export async function renameStage(db: Db, actor: InternalActor, id: string, stageId: string, name: string) {
  await administer(db, actor, id, async (tx) => {
    const stages = await stagesOf(tx, id);
    stageIn(stages, id, stageId);
    assertStageNamesFree(stages.filter((s) => s.id !== stageId), [name]);
    await tx.execute(RENAME_STAGE, [name, stageId]);
  });
  return getPipeline(db, actor, id);
}

export async function reorderStages(db: Db, actor: InternalActor, id: string, stageIds: readonly string[]) {
  await administer(db, actor, id, async (tx) => {
    const current = new Set((await stagesOf(tx, id)).map((s) => s.id));
    const given = new Set(stageIds);
    if (given.size !== stageIds.length || given.size !== current.size || [...given].some((s) => !current.has(s))) {
      throw new AppError(422, 'invalid_stage_order', 'stageIds must list every stage of the pipeline exactly once', {
        stageIds: [...current],
      });
    }
    await applyOrder(tx, id, stageIds);
  });
  return getPipeline(db, actor, id);
}

/**
 * Refused while deals are on the stage. Lead placements on it move to the stage before it (the next one when it was
 * the first); the only stage of a pipeline cannot be removed while leads are placed on it, so nothing is lost.
 */
export async function removeStage(db: Db, actor: InternalActor, id: string, stageId: string) {
  await administer(db, actor, id, async (tx) => {
    const stages = await stagesOf(tx, id);
    const stage = stageIn(stages, id, stageId);
    const [deals] = await tx.execute<{ n: number }[]>(DEALS_ON, [id, stageId, stageId]);
    if (deals && deals.n > 0) {
      throw conflict('stage_has_deals', `Stage "${stage.name}" still has ${deals.n} deal(s); move them first`, { deals: deals.n });
    }
    const rest = stages.filter((s) => s.id !== stageId);
    const neighbour = [...rest].reverse().find((s) => s.position < stage.position) ?? rest[0];
    const [placed] = await tx.execute<{ n: number }[]>(PLACEMENTS_ON_STAGE, [stageId]);
    if (placed && placed.n > 0) {
      if (!neighbour) {
        throw conflict('stage_has_leads', `Stage "${stage.name}" is the only stage and ${placed.n} lead(s) are placed on it`, {
          leads: placed.n,
        });
      }
      await tx.execute(MOVE_PLACEMENTS, [neighbour.id, stageId]);
    }
    await tx.execute(DELETE_STAGE, [stageId]);
    await applyOrder(tx, id, rest.map((s) => s.id));
  });
  return getPipeline(db, actor, id);
}
