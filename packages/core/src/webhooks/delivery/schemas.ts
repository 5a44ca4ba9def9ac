import { z } from 'zod';
import { PageFields, pageOf } from '../../records/pagination.ts';
import { IsoDateTime, text } from '../../validation/index.ts';

const EndpointId = z.uuid({ message: 'id must be a webhook endpoint id (UUID)' });

export const EndpointIdInput = z.object({ id: EndpointId });
export type EndpointIdInput = z.infer<typeof EndpointIdInput>;

export const AttemptOutcome = z.enum(['succeeded', 'failed', 'blocked', 'skipped', 'filtered']);

export const DeliveryLogInput = z.object({
  id: EndpointId,
  outcome: AttemptOutcome.optional().meta({
    description:
      "Only attempts with this outcome. Without it, every outcome but `filtered` (events the endpoint's filter kept back, listed only when asked for).",
  }),
  event: text(100).optional().meta({ description: 'Only attempts of this event, e.g. contact.created.' }),
  since: z.iso
    .datetime({ offset: true, message: 'since must be an ISO 8601 date-time' })
    .optional()
    .meta({ description: 'Only attempts made at or after this time.', example: '2026-11-20T00:00:00Z' }),
  until: z.iso
    .datetime({ offset: true, message: 'until must be an ISO 8601 date-time' })
    .optional()
    .meta({ description: 'Only attempts made before this time.', example: '2026-11-21T00:00:00Z' }),
  search: z
    .uuid({ message: 'search takes an id (UUID): an event, a delivery, an attempt, or a contact in the payload' })
    .optional()
    .meta({ description: "Attempts of the event, delivery or attempt with this id, or whose payload names it (a contact's id)." }),
  ...PageFields,
});
export type DeliveryLogInput = z.infer<typeof DeliveryLogInput>;

export const DeliveryAttemptView = z.object({
  id: z.uuid().meta({ description: "The attempt's id, sent as its X-Webhook-Id." }),
  at: IsoDateTime.meta({ description: 'When the attempt started (or the delivery was skipped).' }),
  event: z.string(),
  deliveryId: z.uuid().meta({ description: 'The delivery: stable across its attempts; a redelivery or recovery is a new delivery.' }),
  messageId: z.uuid().meta({
    description:
      'Sent as the Standard Webhooks webhook-id: the same for every attempt, redelivery and recovery of one event to this endpoint.',
  }),
  attempt: z.number().int().meta({ description: '1-5; 0 for a delivery skipped before any attempt.' }),
  outcome: AttemptOutcome,
  statusCode: z.number().int().nullable(),
  responseBody: z.string().nullable().meta({ description: "The first 1,024 characters of the receiver's answer." }),
  durationMs: z.number().int().nullable(),
  error: z.string().nullable().meta({ description: 'Why it failed or was skipped.' }),
  nextAttemptAt: IsoDateTime.nullable().meta({ description: 'When the next attempt is due; null when none follows.' }),
  manual: z.boolean().meta({ description: 'A replay or test ping: one attempt, not counted toward disabling.' }),
  requestId: z.string().nullable().meta({
    description:
      "The `x-request-id` of the API request that wrote the event delivered (also on the server's log lines of that request and of these attempts, as `reqId`); null for a ping and for events no request wrote (workers, schedules).",
  }),
});
export type DeliveryAttemptView = z.infer<typeof DeliveryAttemptView>;

export const DeliveryLogPage = pageOf(DeliveryAttemptView);

export const QueuedDelivery = z.object({
  deliveryId: z.uuid(),
  event: z.string(),
  state: z.enum(['pending', 'skipped']).meta({ description: 'pending: sent within moments; skipped: over the hourly limit.' }),
  skipReason: z.string().nullable(),
});
export type QueuedDelivery = z.infer<typeof QueuedDelivery>;

export const RedeliverInput = z.object({ id: EndpointId, deliveryId: z.uuid({ message: 'deliveryId must be a delivery id (UUID)' }) });
export type RedeliverInput = z.infer<typeof RedeliverInput>;

export const RecoverInput = z.object({
  id: EndpointId,
  since: z.iso.datetime({ offset: true, message: 'since must be an ISO 8601 date-time' }).meta({ example: '2026-11-20T00:00:00Z' }),
});
export type RecoverInput = z.infer<typeof RecoverInput>;

export const RecoverResult = z.object({
  replayed: z.number().int().meta({ description: 'Failed or skipped deliveries since then queued again as manual replays.' }),
  remaining: z.number().int().meta({ description: "Left out because the workspace's hourly delivery limit is reached; call again later." }),
});
export type RecoverResult = z.infer<typeof RecoverResult>;

export const AttemptIdInput = z.object({ id: EndpointId, attemptId: z.uuid({ message: 'attemptId must be an attempt id (UUID)' }) });
export type AttemptIdInput = z.infer<typeof AttemptIdInput>;

export const DeliveryAttemptDetail = DeliveryAttemptView.extend({
  eventId: z.uuid().nullable().meta({ description: 'The event delivered (its `id` in the body); null for a ping.' }),
  request: z.object({
    method: z.literal('POST'),
    url: z.string().nullable().meta({ description: 'Where the attempt went; null for attempts logged before the URL was kept.' }),
    headers: z
      .record(z.string(), z.string())
      .nullable()
      .meta({ description: 'The headers exactly as sent (signatures included); null for skipped deliveries and older attempts.' }),
    body: z.string().meta({ description: 'The body exactly as sent: the same bytes on every attempt of the delivery.' }),
  }),
  response: z.object({
    statusCode: z.number().int().nullable(),
    headers: z
      .array(z.tuple([z.string(), z.string()]))
      .nullable()
      .meta({ description: "The answer's headers in order as [name, value]: at most 50, values cut at 512 characters." }),
    body: z.string().nullable().meta({ description: "The first 1,024 characters of the receiver's answer." }),
  }),
  next: z.object({
    at: IsoDateTime.nullable(),
    why: z.string().meta({ description: 'Why another attempt follows, or why none does.' }),
  }),
});
export type DeliveryAttemptDetail = z.infer<typeof DeliveryAttemptDetail>;
