import { z } from 'zod';
import { defineEvent, EX, EXAMPLE_TIMESTAMP } from '../payload.ts';

/** The spec's delivery numbers (webhooks/delivery/policy.ts, which this shared module may not import). */
const MAX_ATTEMPTS = 5;
const HOURLY_DELIVERY_LIMIT = 1_000;

/**
 * Operational events (issue 19): what the owners' mail says, for endpoints that subscribe to it. A disabled endpoint
 * gets its own `webhook.endpoint_disabled` recorded as skipped (it receives nothing while disabled); other subscribed
 * endpoints receive it.
 */
const EndpointRef = z
  .object({
    id: z.uuid(),
    url: z.string().meta({
      description:
        "The endpoint URL's origin, then `/…` when it has a path or query (those often hold a receiver's credential, and this event goes to every subscriber); the full URL is on the endpoint screen.",
    }),
  })
  .meta({ description: 'The webhook endpoint the event is about.' });

const EXAMPLE_ENDPOINT = { id: 'a9b8c7d6-e5f4-4a3b-8c2d-1e0f9a8b7c65', url: 'https://hooks.example.com/…' };

export const webhookEvents = [
  defineEvent({
    name: 'webhook.endpoint_disabled',
    label: 'Webhook endpoint disabled',
    description:
      'An endpoint stopped receiving deliveries: after failures in a row, a URL pointing at a private address, or a user disabling it (`reason` says which). Sent once per disabling; the owners get the same news by mail.',
    data: z.object({
      endpoint: EndpointRef,
      reason: z.string().meta({ description: 'Why, in words, as the endpoint screen shows it.' }),
      failureCount: z.int().min(0).meta({ description: 'Automatic deliveries that failed in a row when it was disabled.' }),
    }),
    source: 'system',
    exampleData: {
      endpoint: EXAMPLE_ENDPOINT,
      reason: '10 deliveries failed in a row; the last one: HTTP 503',
      failureCount: 10,
    },
  }),
  defineEvent({
    name: 'webhook.endpoint_enabled',
    label: 'Webhook endpoint enabled',
    description: 'A user enabled a disabled endpoint again; its failure count starts from zero.',
    data: z.object({
      endpoint: EndpointRef,
      enabledBy: z.uuid().nullable().meta({ description: 'The user who enabled it.' }),
    }),
    source: 'system',
    exampleData: { endpoint: EXAMPLE_ENDPOINT, enabledBy: EX.user },
  }),
  defineEvent({
    name: 'webhook.delivery_failed',
    label: 'Webhook delivery failed',
    description: `A delivery failed all its ${MAX_ATTEMPTS} attempts and will not be tried again (redeliver it from the delivery log). Never sent about the delivery of another \`webhook.*\` event.`,
    data: z.object({
      delivery: z.object({
        id: z.uuid(),
        attempts: z.int().min(1),
        lastStatusCode: z.int().nullable().meta({ description: "The last attempt's HTTP status; null when no answer came." }),
        lastError: z.string().nullable().meta({ description: 'What went wrong on the last attempt, in words.' }),
      }),
      endpoint: EndpointRef,
      eventId: z.uuid().meta({ description: "The failed event's id (look it up in GET /v1/events)." }),
      eventName: z.string().meta({ description: "The failed event's name." }),
    }),
    source: 'system',
    exampleData: {
      delivery: { id: 'b8c7d6e5-f4a3-4b2c-9d1e-0f9a8b7c6d54', attempts: MAX_ATTEMPTS, lastStatusCode: 503, lastError: null },
      endpoint: EXAMPLE_ENDPOINT,
      eventId: '9c1f4e2a-7b3d-4a58-8e6f-0d2c1b3a4e5f',
      eventName: 'contact.created',
    },
  }),
  defineEvent({
    name: 'webhook.limit_reached',
    label: 'Hourly delivery limit reached',
    description: `The workspace used its ${HOURLY_DELIVERY_LIMIT.toLocaleString('en-US')} deliveries of this UTC hour: further deliveries are recorded as skipped until the next hour (the next one sent carries them as \`gap\`). Sent once per hour, at the first skip; \`webhook.*\` events themselves are not limited.`,
    data: z.object({
      hour: z.iso.datetime().meta({ description: 'The start of the UTC hour the limit applies to.' }),
      limit: z.int().min(1),
      skipped: z.int().min(1).meta({ description: 'Deliveries skipped by the change that reached the limit.' }),
    }),
    source: 'system',
    exampleData: { hour: EXAMPLE_TIMESTAMP.slice(0, 13) + ':00:00.000Z', limit: HOURLY_DELIVERY_LIMIT, skipped: 3 },
  }),
] as const;
