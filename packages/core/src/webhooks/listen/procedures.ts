import { internalProcedure } from '../../auth/internal.ts';
import { INTERNAL_ERRORS } from '../../errors/surfaces.ts';
import { TriggerInput, TriggerResult } from './schemas.ts';
import { triggerEvent } from './trigger.ts';

/** `POST /api/webhooks/trigger`, composed into `webhooksRouter`; the stream itself is an HTTP route (apps/server). */
export const listenProcedures = {
  trigger: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/trigger',
        tags: ['Webhooks'],
        summary: "Send an event's example to your listen streams, and optionally to one endpoint (owner or admin)",
        description:
          "The catalogue's example of `event`, with the current time as its timestamp, goes to every `leadwire listen` stream of the organization (`GET /api/webhooks/listen`), never to subscribed endpoints. With `endpointId` it is also delivered to that endpoint as a manual delivery (one attempt, not counted toward disabling; it counts toward the hourly limit).",
      },
      errorCodes: [...INTERNAL_ERRORS, 'forbidden_role', 'not_found'],
    })
    .input(TriggerInput)
    .output(TriggerResult)
    .mutation(({ ctx, input }) => triggerEvent(ctx.db, ctx.actor, input, ctx.deps.clock.now())),
};
