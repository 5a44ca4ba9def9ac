import { internalProcedure } from '../../auth/internal.ts';
import { INTERNAL_ERRORS } from '../../errors/surfaces.ts';
import { getAttempt } from './attempt.ts';
import {
  AttemptIdInput,
  DeliveryAttemptDetail,
  DeliveryLogInput,
  DeliveryLogPage,
  EndpointIdInput,
  QueuedDelivery,
  RecoverInput,
  RecoverResult,
  RedeliverInput,
} from './schemas.ts';
import { listDeliveryLog, recover, redeliver, sendTestPing } from './service.ts';

const tags = ['Webhooks'];
const ON_ENDPOINT = [...INTERNAL_ERRORS, 'forbidden_role', 'not_found'] as const;

/**
 * The delivery side of `/api/webhooks/{id}` (owners and admins): the test ping, the delivery log, and manual replays.
 * A plain record, composed with the endpoint procedures in `webhooksRouter`.
 */
export const deliveryProcedures = {
  test: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/test',
        tags,
        summary: 'Send a ping event to this endpoint (owner or admin)',
        description:
          'A manual delivery of `ping` (data.message, no source), sent even while the endpoint is disabled; one attempt, not counted toward disabling. It counts toward the hourly delivery limit.',
      },
      successStatus: 202,
      errorCodes: ON_ENDPOINT,
    })
    .input(EndpointIdInput)
    .output(QueuedDelivery)
    .mutation(({ ctx, input }) => sendTestPing(ctx.db, ctx.actor, input.id, ctx.deps.clock.now())),

  deliveries: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/{id}/deliveries',
        tags,
        summary: 'The delivery log: every attempt, newest first (owner or admin)',
        description:
          "Kept for 30 days. Skipped deliveries (endpoint disabled, hourly limit) appear as attempt 0 with outcome `skipped`; events the endpoint's filter kept back as attempt 0 with outcome `filtered`, listed only with `outcome=filtered`.",
      },
      errorCodes: [...ON_ENDPOINT, 'invalid_cursor'],
    })
    .input(DeliveryLogInput)
    .output(DeliveryLogPage)
    .query(({ ctx, input }) => listDeliveryLog(ctx.db, ctx.actor, input)),

  attempt: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/{id}/attempts/{attemptId}',
        tags,
        summary: 'One attempt of the delivery log: what was sent and what came back (owner or admin)',
        description:
          "The request's URL, headers exactly as sent (webhook-id, webhook-timestamp, webhook-signature, content type) and body exactly as sent; the answer's status, headers and body excerpt; the duration; the next attempt and why.",
      },
      errorCodes: ON_ENDPOINT,
    })
    .input(AttemptIdInput)
    .output(DeliveryAttemptDetail)
    .query(({ ctx, input }) => getAttempt(ctx.db, ctx.actor, input)),

  redeliver: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/deliveries/{deliveryId}/redeliver',
        tags,
        summary: 'Send a delivery again (owner or admin)',
        description:
          'A new manual delivery of the same bytes (new delivery id, same `webhook-id`): one attempt, not counted toward disabling.',
      },
      successStatus: 202,
      errorCodes: ON_ENDPOINT,
    })
    .input(RedeliverInput)
    .output(QueuedDelivery)
    .mutation(({ ctx, input }) => redeliver(ctx.db, ctx.actor, input, ctx.deps.clock.now())),

  recover: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/recover',
        tags,
        summary: 'Replay every delivery that failed or was skipped since a time (owner or admin)',
        description:
          "Each becomes a manual replay (one attempt, not counted toward disabling, with its original's `webhook-id`), oldest first, as many as the hourly limit leaves; call again later for the rest. Deliveries already replayed successfully (or on their way) are not replayed twice.",
      },
      errorCodes: ON_ENDPOINT,
    })
    .input(RecoverInput)
    .output(RecoverResult)
    .mutation(({ ctx, input }) => recover(ctx.db, ctx.actor, input, ctx.deps.clock.now())),
};
