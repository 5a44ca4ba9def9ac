import { internalProcedure } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { AiActionCreateInput, AiActionIdInput, AiActionListInput, AiActionPage, AiActionRejectInput, AiActionView } from './schemas.ts';
import { createAiAction, decideAiAction, getAiAction, listAiActions } from './service.ts';

const tags = ['AI actions'];
const DECIDE_ERRORS = [...INTERNAL_ERRORS, 'not_found', 'ai_action_already_decided'] as const;

/** Every member reviews suggestions; the AI side files them with an Internal key. */
export const aiActionsRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/ai-actions', tags, summary: 'Suggested actions, newest first, filtered by contact or status' },
      errorCodes: [...INTERNAL_ERRORS, 'invalid_cursor'],
    })
    .input(AiActionListInput)
    .output(AiActionPage)
    .query(({ ctx, input }) => listAiActions(ctx.db, ctx.actor, input)),

  get: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/ai-actions/{id}', tags, summary: 'A suggested action' },
      errorCodes: [...INTERNAL_ERRORS, 'not_found'],
    })
    .input(AiActionIdInput)
    .output(AiActionView)
    .query(({ ctx, input }) => getAiAction(ctx.db, ctx.actor, input.id)),

  create: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/ai-actions',
        tags,
        summary: 'Suggest an action on a contact (emits ai_action.created, source ai)',
      },
      successStatus: 201,
      errorCodes: [...INTERNAL_ERRORS, 'not_found'],
    })
    .input(AiActionCreateInput)
    .output(AiActionView)
    .mutation(({ ctx, input }) => createAiAction(ctx.db, ctx.actor, input, ctx.deps.clock.now())),

  approve: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/ai-actions/{id}/approve',
        tags,
        summary: 'Approve a pending suggestion (emits ai_action.approved)',
      },
      errorCodes: DECIDE_ERRORS,
    })
    .input(AiActionIdInput)
    .output(AiActionView)
    .mutation(({ ctx, input }) => decideAiAction(ctx.db, ctx.actor, input.id, 'approved', null, ctx.deps.clock.now())),

  reject: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/ai-actions/{id}/reject',
        tags,
        summary: 'Reject a pending suggestion, optionally saying why (emits ai_action.rejected)',
      },
      errorCodes: DECIDE_ERRORS,
    })
    .input(AiActionRejectInput)
    .output(AiActionView)
    .mutation(({ ctx, input }) => decideAiAction(ctx.db, ctx.actor, input.id, 'rejected', input.reason ?? null, ctx.deps.clock.now())),
});
