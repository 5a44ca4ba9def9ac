import { z } from 'zod';
import type { oas31 } from 'zod-openapi';
import { EVENT_CATALOGUE } from '../events/catalogue.ts';
import { EVENT_NAMES, type EventName } from '../events/names.ts';
import { DeliveryGap, EventContact, EventContactRef } from '../events/payload.ts';

/*
 * The v1 document's top-level `webhooks` (OpenAPI 3.1): one POST per event, as Leadwire sends it to an endpoint. The
 * payload schemas come from the event catalogue (zod -> JSON Schema), so the contract and the emitters share one
 * source; the contact shapes are components, the rest inline.
 */

const HEX64 = '^[0-9a-f]{64}$';
const SECONDS = '^[0-9]{1,12}$';
const UUID = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

const header = (name: string, description: string, schema: oas31.SchemaObject): oas31.ParameterObject => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
});

/** Request headers of every delivery, as components/parameters (names prefixed so they never meet the API's own). */
const HEADERS: Record<string, oas31.ParameterObject> = {
  WebhookSignature: header(
    'X-Webhook-Signature',
    "Lowercase hex HMAC-SHA256 of the exact raw request body, keyed with the endpoint's whole signing secret (the `whsec_...` string as UTF-8), no `sha256=` prefix. Verify it over the raw bytes before parsing, with a constant-time comparison. It signs the body only, no time and no id: it does not protect against replay (a captured delivery verifies forever), so prefer `webhook-signature`, and never fall back to this one when the `webhook-*` headers are missing.",
    { type: 'string', pattern: HEX64, example: '5d1c7c1f0b6a3f2e9e5f1b0c8a7d6e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d' },
  ),
  WebhookEvent: header('X-Webhook-Event', "The event name, the same as the body's `event`.", {
    type: 'string',
    enum: [...EVENT_NAMES],
    example: 'contact.created',
  }),
  WebhookTimestamp: header(
    'X-Webhook-Timestamp',
    'When this attempt was signed: Unix time in whole seconds, the same value as `webhook-timestamp`. `X-Webhook-Signature` does not cover it, so it proves nothing on its own: refuse replays with `webhook-timestamp`, which `webhook-signature` signs.',
    { type: 'string', pattern: SECONDS, example: '1795356187' },
  ),
  WebhookId: header('X-Webhook-Id', 'The id of this attempt (a UUID): new on every attempt, so not a de-duplication key.', {
    type: 'string',
    pattern: UUID,
    example: '0b7c2f3e-9a41-4d58-8e6f-2c1d3b4a5e60',
  }),
  WebhookUserAgent: header('User-Agent', 'Always `Leadwire-Webhooks/1.0`.', { type: 'string', const: 'Leadwire-Webhooks/1.0' }),
  StandardWebhookId: header(
    'webhook-id',
    'Standard Webhooks: the message id (a UUID), the same on every attempt of one event to this endpoint, on a manual redelivery and on a recovery, so a receiver can de-duplicate on it. The signature signs it.',
    { type: 'string', pattern: UUID, example: '7e3a9c41-2b5d-4f68-9a0e-1c2d3e4f5a6b' },
  ),
  StandardWebhookTimestamp: header('webhook-timestamp', 'Standard Webhooks: Unix time in whole seconds (same as `X-Webhook-Timestamp`).', {
    type: 'string',
    pattern: SECONDS,
    example: '1795356187',
  }),
  StandardWebhookSignature: header(
    'webhook-signature',
    'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the secret after `whsec_`. For 24 hours after a secret rotation a second `v1,...` (the previous secret) follows, space-separated; accept the delivery if any one matches.',
    {
      type: 'string',
      pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$',
      example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    },
  ),
};

/** What every webhook operation says about delivery; the Webhooks tag carries the long form. */
const DELIVERY = [
  "Sent as a POST with a JSON body (`content-type: application/json`) to the endpoint's HTTPS URL, signed as the headers below say.",
  'Answer with any 2xx within 10 seconds. Anything else (another status, a redirect, which is never followed, a timeout or a connection error) is retried: 5 attempts in total, about 30 s, 2 min, 8 min and 32 min after the first, each spread at random by up to 10% either way (27-33 s, 108-132 s, 432-528 s, 1,728-2,112 s) so that deliveries that failed together are not retried together. Ten failed attempts in a row disable the endpoint.',
  "Deliveries are at least once: de-duplicate on the body's `id`, the event's id (the same in every attempt, redelivery and recovery, to every endpoint, in the changes feed `GET /v1/events` and in `leadwire listen` streams), or on `webhook-id` (the same for every attempt, redelivery and recovery of one event to one endpoint).",
].join('\n\n');

export const WEBHOOKS_TAG: oas31.TagObject = {
  name: 'Webhooks',
  description: [
    'Leadwire POSTs an event to each enabled endpoint subscribed to it (`POST /api/webhooks` in the application API).',
    "Payload: `{ id, event, timestamp, source, data }`. `id` is the event's id: de-duplicate on it (a restored contact's second `contact.created` is a new event with a new id). `timestamp` is ISO 8601 UTC with milliseconds; `source` says who made the change (`app`, `api`, `zapier`, `import`, `sync`, `automation`, `ai`, `inbound`, `system`, `partner`) and is absent on `ping`; `data` depends on the event (contact events carry `data.contact`).",
    "Verify the `webhook-*` headers, which follow Standard Webhooks: its libraries check the signature and refuse a timestamp more than 5 minutes off, so a captured delivery cannot be replayed: `new Webhook(secret).verify(rawBody, headers)` (or `verifyWebhook` of `@leadwire/sdk/webhooks`). Refuse a delivery that lacks them. `X-Webhook-Signature` (hex HMAC-SHA256 of the raw body: `crypto.timingSafeEqual(Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex')), Buffer.from(signatureHeader))`, lengths compared first) signs no time: it does not protect against replay, so a receiver that checks only it must de-duplicate.",
    DELIVERY,
    'At most 1,000 deliveries per hour per workspace: events beyond it are not delivered and show in the delivery log as skipped, to be sent later with `recover`. Delivery logs are kept 30 days.',
    "Gaps: when an endpoint missed events (skipped over the hourly limit, or sent while the endpoint was disabled), its next delivery carries `gap: { skipped, after }`: how many it missed, and a changes-feed cursor just before the first of them. Catch up with `GET /v1/events?after=<gap.after>&types=<your events>`, reading on until you reach this delivery's `id`, and de-duplicate on `id`. A delivery without a gap has no `gap` field.",
  ].join('\n\n'),
};

const SCHEMA_PREFIX = '#/components/schemas/';

/** JSON Schemas of the payloads, with the contact shapes as shared components. */
function payloadSchemas(): Record<string, oas31.SchemaObject> {
  const registry = z.registry<{ id: string }>();
  registry.add(EventContact, { id: 'WebhookEventContact' });
  registry.add(EventContactRef, { id: 'WebhookEventContactRef' });
  registry.add(DeliveryGap, { id: 'WebhookDeliveryGap' });
  for (const name of EVENT_NAMES) {
    // `gap` belongs to deliveries, not to the event (the feed's items have none); `ping`, always manual, never has one.
    const payload = EVENT_CATALOGUE[name].payload;
    registry.add(name === 'ping' ? payload : payload.extend({ gap: DeliveryGap.optional() }), { id: payloadId(name) });
  }
  // `input`: objects inside `data` stay open, so a receiver that validates keeps working when a field is added later.
  const { schemas } = z.toJSONSchema(registry, { uri: (id) => `${SCHEMA_PREFIX}${id}`, io: 'input', unrepresentable: 'any' });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _schema, $id: _id, ...schema }]) => [id, schema as oas31.SchemaObject]),
  );
}

const payloadId = (name: EventName) => `WebhookPayload.${name}`;

function operation(name: EventName): oas31.PathItemObject {
  const def = EVENT_CATALOGUE[name];
  return {
    post: {
      operationId: `webhook.${name}`,
      summary: `${def.label} (${name})`,
      description: `${def.description}\n\n${DELIVERY}`,
      tags: ['Webhooks'],
      // Leadwire calls the receiver: no Leadwire credential is involved; the receiver checks the signature headers.
      security: [],
      parameters: Object.keys(HEADERS).map((key) => ({ $ref: `#/components/parameters/${key}` })),
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: `${SCHEMA_PREFIX}${payloadId(name)}` }, example: def.example } },
      },
      responses: {
        '2XX': {
          description: 'Received. Answer within 10 seconds; the body is ignored (the first 1,024 characters show in the delivery log).',
        },
        default: {
          description: 'Not received: any other status, a redirect, a timeout or a connection error is retried as described above.',
        },
      },
    },
  };
}

/** Adds `webhooks`, their schemas and header parameters, and the Webhooks tag to the v1 document. */
export function addWebhooks(doc: oas31.OpenAPIObject): void {
  doc.webhooks = Object.fromEntries(EVENT_NAMES.map((name) => [name, operation(name)]));
  doc.components = {
    ...doc.components,
    schemas: { ...doc.components?.schemas, ...payloadSchemas() },
    parameters: { ...doc.components?.parameters, ...HEADERS },
  };
  doc.tags = [...(doc.tags ?? []), WEBHOOKS_TAG];
}
