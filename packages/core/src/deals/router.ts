import { internalProcedure } from '../auth/internal.ts';
import { router } from '../trpc.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { DealCreateInput, DealIdInput, DealListInput, DealPage, DealUpdateInput, DealView } from './schemas.ts';
import { createDeal, getDeal, listDeals, updateDeal } from './service.ts';

const tags = ['Deals'];
const PLACEMENT_ERRORS = ['stage_not_in_pipeline', 'pipeline_has_no_stages'] as const;

/** Every member works deals; the pipeline they sit on is what owners and admins administer. */
export const dealsRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/deals', tags, summary: 'Deals, newest first, filtered by pipeline, stage, contact or status' },
      errorCodes: [...INTERNAL_ERRORS, 'invalid_cursor'],
    })
    .input(DealListInput)
    .output(DealPage)
    .query(({ ctx, input }) => listDeals(ctx.db, ctx.actor, input)),

  get: internalProcedure
    .meta({ openapi: { method: 'GET', path: '/deals/{id}', tags, summary: 'A deal' }, errorCodes: [...INTERNAL_ERRORS, 'not_found'] })
    .input(DealIdInput)
    .output(DealView)
    .query(({ ctx, input }) => getDeal(ctx.db, ctx.actor, input.id)),

  create: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/deals', tags, summary: 'Create a deal for a contact (emits deal.created)' },
      successStatus: 201,
      errorCodes: [...INTERNAL_ERRORS, 'not_found', 'no_default_pipeline', ...PLACEMENT_ERRORS],
    })
    .input(DealCreateInput)
    .output(DealView)
    .mutation(({ ctx, input }) => createDeal(ctx.db, ctx.actor, input, ctx.deps.clock.now())),

  update: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/deals/{id}/update',
        tags,
        summary: 'Change a deal: fields (deal.updated), stage (deal.stage_changed), status (deal.won, deal.lost)',
      },
      errorCodes: [...INTERNAL_ERRORS, 'not_found', ...PLACEMENT_ERRORS],
    })
    .input(DealUpdateInput)
    .output(DealView)
    .mutation(({ ctx, input }) => updateDeal(ctx.db, ctx.actor, input, ctx.deps.clock.now())),
});
