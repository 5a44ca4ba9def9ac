import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { conflict } from '../conflict.ts';
import { iso } from '../records/dates.ts';
import { AppError, errors } from '../errors.ts';
import { MAX_STAGES, type PipelineCreateInput, type PipelineView, type StageAddInput, type StageView } from './schemas.ts';
import * as q from './sql.ts';

const toView = (r: q.PipelineRow): PipelineView => ({
  id: r.id,
  name: r.name,
  isDefault: r.is_default,
  createdAt: iso(r.created_at),
  stages: r.stages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
});

export async function listPipelines(db: Db, actor: InternalActor): Promise<{ items: PipelineView[] }> {
  const rows = await db.run(q.SELECT_PIPELINES, { orgId: actor.orgId, id: null });
  return { items: rows.map(toView) };
}

export async function getPipeline(db: Db, actor: InternalActor, id: string): Promise<PipelineView> {
  const [row] = await db.run(q.SELECT_PIPELINES, { orgId: actor.orgId, id });
  if (!row) throw errors.notFound(`No pipeline with id ${id}`);
  return toView(row);
}

/** Pipeline administration: owners and admins, one change per organization at a time, returning the new state. */
async function administer(
  db: Db,
  actor: InternalActor,
  pipelineId: string | null,
  fn: (tx: Db, pipeline: q.LockedPipeline | null) => Promise<string | void>,
): Promise<string> {
  requireRole(actor, 'owner', 'admin');
  return db.transaction(async (tx) => {
    await tx.run(q.LOCK_ORG_PIPELINES, { orgId: actor.orgId });
    let pipeline = null;
    if (pipelineId) {
      [pipeline] = await tx.run(q.LOCK_PIPELINE, { id: pipelineId, orgId: actor.orgId });
      if (!pipeline) throw errors.notFound(`No pipeline with id ${pipelineId}`);
    }
    return (await fn(tx, pipeline ?? null)) ?? pipelineId!;
  });
}

async function assertNameFree(tx: Db, orgId: string, name: string, exceptId: string) {
  const [taken] = await tx.run(q.NAME_TAKEN, { orgId, name, exceptId });
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
  return tx.run(q.STAGES, { pipelineId });
}

function stageIn(stages: readonly StageView[], pipelineId: string, stageId: string): StageView {
  const stage = stages.find((s) => s.id === stageId);
  if (!stage) throw errors.notFound(`No stage ${stageId} in pipeline ${pipelineId}`);
  return stage;
}

async function applyOrder(tx: Db, pipelineId: string, ids: readonly string[]) {
  await tx.run(q.PARK_POSITIONS, { pipelineId });
  await tx.run(q.APPLY_ORDER, { ids: JSON.stringify(ids), pipelineId });
}

/** The first pipeline of an organization becomes its default, so leads always have somewhere to land. */
export async function createPipeline(db: Db, actor: InternalActor, input: PipelineCreateInput, now: Date): Promise<PipelineView> {
  const id = await administer(db, actor, null, async (tx) => {
    const id = randomUUID();
    await assertNameFree(tx, actor.orgId, input.name, id);
    const stages = input.stages ?? [];
    assertStageNamesFree([], stages);
    const [hasDefault] = await tx.run(q.HAS_DEFAULT, { orgId: actor.orgId });
    const makeDefault = input.isDefault === true || !hasDefault;
    if (makeDefault) await tx.run(q.CLEAR_DEFAULT, { orgId: actor.orgId, exceptId: id });
    await tx.run(q.INSERT_PIPELINE, { id, orgId: actor.orgId, name: input.name, isDefault: makeDefault, now });
    if (stages.length) await tx.run(q.INSERT_STAGES, { orgId: actor.orgId, pipelineId: id, names: JSON.stringify(stages) });
    return id;
  });
  return getPipeline(db, actor, id);
}

export async function renamePipeline(db: Db, actor: InternalActor, id: string, name: string): Promise<PipelineView> {
  await administer(db, actor, id, async (tx) => {
    await assertNameFree(tx, actor.orgId, name, id);
    await tx.run(q.RENAME_PIPELINE, { id, name });
  });
  return getPipeline(db, actor, id);
}

/** Clearing the old default and setting the new one commit together: readers see exactly one default throughout. */
export async function setDefaultPipeline(db: Db, actor: InternalActor, id: string): Promise<PipelineView> {
  await administer(db, actor, id, async (tx) => {
    await tx.run(q.CLEAR_DEFAULT, { orgId: actor.orgId, exceptId: id });
    await tx.run(q.SET_DEFAULT, { id });
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
    const [deals] = await tx.run(q.DEALS_ON, { pipelineId: id, stageId: null });
    if (deals && deals.n > 0) {
      throw conflict(
        'pipeline_has_deals',
        `Pipeline "${pipeline!.name}" still has ${deals.n} deal(s); move them to another pipeline before deleting it`,
        { deals: deals.n },
      );
    }
    await tx.run(q.DELETE_PIPELINE, { id });
    if (pipeline!.is_default) await tx.run(q.PROMOTE_OLDEST, { orgId: actor.orgId });
  });
  return { id, deleted: true as const };
}

export async function addStage(db: Db, actor: InternalActor, input: StageAddInput): Promise<PipelineView> {
  await administer(db, actor, input.id, async (tx) => {
    const stages = await stagesOf(tx, input.id);
    if (stages.length >= MAX_STAGES) {
      throw new AppError('stage_limit_reached', `A pipeline holds at most ${MAX_STAGES} stages`);
    }
    assertStageNamesFree(stages, [input.name]);
    const stageId = randomUUID();
    await tx.run(q.INSERT_STAGE, {
      id: stageId,
      orgId: actor.orgId,
      pipelineId: input.id,
      name: input.name,
      position: (stages.at(-1)?.position ?? -1) + 1,
    });
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
    assertStageNamesFree(
      stages.filter((s) => s.id !== stageId),
      [name],
    );
    await tx.run(q.RENAME_STAGE, { id: stageId, name });
  });
  return getPipeline(db, actor, id);
}

export async function reorderStages(db: Db, actor: InternalActor, id: string, stageIds: readonly string[]) {
  await administer(db, actor, id, async (tx) => {
    const current = new Set((await stagesOf(tx, id)).map((s) => s.id));
    const given = new Set(stageIds);
    if (given.size !== stageIds.length || given.size !== current.size || [...given].some((s) => !current.has(s))) {
      throw new AppError('invalid_stage_order', 'stageIds must list every stage of the pipeline exactly once', {
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
    const [deals] = await tx.run(q.DEALS_ON, { pipelineId: id, stageId });
    if (deals && deals.n > 0) {
      throw conflict('stage_has_deals', `Stage "${stage.name}" still has ${deals.n} deal(s); move them first`, { deals: deals.n });
    }
    const rest = stages.filter((s) => s.id !== stageId);
    const neighbour = [...rest].reverse().find((s) => s.position < stage.position) ?? rest[0];
    const [placed] = await tx.run(q.PLACEMENTS_ON_STAGE, { stageId });
    if (placed && placed.n > 0) {
      if (!neighbour) {
        throw conflict('stage_has_leads', `Stage "${stage.name}" is the only stage and ${placed.n} lead(s) are placed on it`, {
          leads: placed.n,
        });
      }
      await tx.run(q.MOVE_PLACEMENTS, { from: stageId, to: neighbour.id });
    }
    await tx.run(q.DELETE_STAGE, { id: stageId });
    await applyOrder(
      tx,
      id,
      rest.map((s) => s.id),
    );
  });
  return getPipeline(db, actor, id);
}
