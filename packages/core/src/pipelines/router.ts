import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import {
  DeletedOutput,
  PipelineCreateInput,
  PipelineIdInput,
  PipelineList,
  PipelineRenameInput,
  PipelineView,
  StageAddInput,
  StageRemoveInput,
  StageRenameInput,
  StageReorderInput,
} from './schemas.ts';
import {
  addStage,
  createPipeline,
  deletePipeline,
  getPipeline,
  listPipelines,
  removeStage,
  renamePipeline,
  renameStage,
  reorderStages,
  setDefaultPipeline,
} from './service.ts';

const tags = ['Pipelines'];
/** Everything but reading is pipeline administration: owners and admins only. */
const ADMIN_ERRORS = [...INTERNAL_ERRORS, 'forbidden_role', 'not_found'] as const;

export const pipelinesRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/pipelines', tags, summary: 'Pipelines with their stages, the default first' },
      errorCodes: INTERNAL_ERRORS,
    })
    .input(z.void())
    .output(PipelineList)
    .query(({ ctx }) => listPipelines(ctx.db, ctx.actor)),

  get: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/pipelines/{id}', tags, summary: 'A pipeline with its stages' },
      errorCodes: [...INTERNAL_ERRORS, 'not_found'],
    })
    .input(PipelineIdInput)
    .output(PipelineView)
    .query(({ ctx, input }) => getPipeline(ctx.db, ctx.actor, input.id)),

  create: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/pipelines', tags, summary: 'Create a pipeline (owner or admin)' },
      successStatus: 201,
      errorCodes: [...ADMIN_ERRORS, 'pipeline_name_taken', 'stage_name_taken'],
    })
    .input(PipelineCreateInput)
    .output(PipelineView)
    .mutation(({ ctx, input }) => createPipeline(ctx.db, ctx.actor, input, ctx.deps.clock.now())),

  rename: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/pipelines/{id}/rename', tags, summary: 'Rename a pipeline (owner or admin)' },
      errorCodes: [...ADMIN_ERRORS, 'pipeline_name_taken'],
    })
    .input(PipelineRenameInput)
    .output(PipelineView)
    .mutation(({ ctx, input }) => renamePipeline(ctx.db, ctx.actor, input.id, input.name)),

  setDefault: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/pipelines/{id}/default', tags, summary: 'Make a pipeline the default (owner or admin)' },
      errorCodes: ADMIN_ERRORS,
    })
    .input(PipelineIdInput)
    .output(PipelineView)
    .mutation(({ ctx, input }) => setDefaultPipeline(ctx.db, ctx.actor, input.id)),

  delete: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/pipelines/{id}/delete',
        tags,
        summary: 'Delete a pipeline without deals (owner or admin); 409 pipeline_has_deals otherwise',
      },
      errorCodes: [...ADMIN_ERRORS, 'pipeline_has_deals'],
    })
    .input(PipelineIdInput)
    .output(DeletedOutput)
    .mutation(({ ctx, input }) => deletePipeline(ctx.db, ctx.actor, input.id)),

  addStage: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/pipelines/{id}/stages', tags, summary: 'Add a stage (owner or admin)' },
      errorCodes: [...ADMIN_ERRORS, 'stage_name_taken', 'stage_limit_reached'],
    })
    .input(StageAddInput)
    .output(PipelineView)
    .mutation(({ ctx, input }) => addStage(ctx.db, ctx.actor, input)),

  renameStage: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/pipelines/{id}/stages/{stageId}/rename', tags, summary: 'Rename a stage (owner or admin)' },
      errorCodes: [...ADMIN_ERRORS, 'stage_name_taken'],
    })
    .input(StageRenameInput)
    .output(PipelineView)
    .mutation(({ ctx, input }) => renameStage(ctx.db, ctx.actor, input.id, input.stageId, input.name)),

  reorderStages: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/pipelines/{id}/stages/reorder', tags, summary: 'Put the stages in a new order (owner or admin)' },
      errorCodes: [...ADMIN_ERRORS, 'invalid_stage_order'],
    })
    .input(StageReorderInput)
    .output(PipelineView)
    .mutation(({ ctx, input }) => reorderStages(ctx.db, ctx.actor, input.id, input.stageIds)),

  removeStage: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/pipelines/{id}/stages/{stageId}/delete',
        tags,
        summary: 'Remove a stage without deals (owner or admin); its lead placements move to the previous stage',
      },
      errorCodes: [...ADMIN_ERRORS, 'stage_has_deals', 'stage_has_leads'],
    })
    .input(StageRemoveInput)
    .output(PipelineView)
    .mutation(({ ctx, input }) => removeStage(ctx.db, ctx.actor, input.id, input.stageId)),
});
