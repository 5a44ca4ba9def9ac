/**
 * Verifying Leadwire webhook deliveries with Web Crypto only, so one file runs in Node 20+, Deno, Bun, edge runtimes and
 * browsers. Event types come from the v1 OpenAPI document's `webhooks` (generated, see ./generated/v1.ts) as TYPES only:
 * nothing of the server ends up in a bundle or in the published declarations.
 */
import type { webhooks } from './generated/v1.ts';

/** The names of every event of the catalogue. */
export type WebhookEventName = keyof webhooks;

type BodyOf<N extends WebhookEventName> = webhooks[N]['post'] extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : never;

/** One delivered event of the catalogue; narrow it with `switch (event.event)`. */
export type WebhookEvent = { [N in WebhookEventName]: BodyOf<N> }[WebhookEventName];

/** The event of one name, e.g. `WebhookEventOf<'contact.created'>`. */
export type WebhookEventOf<N extends WebhookEventName> = Extract<WebhookEvent, { event: N }>;

/** Why a delivery was refused. */
export type WebhookVerificationReason =
  | 'missing_secret'
  | 'missing_headers'
  | 'malformed_header'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_payload';

/** The one error `verifyWebhook` and `verifyWebhookBodySignature` throw; answer the delivery with a 400 when you catch it. */
export class WebhookVerificationError extends Error {
  /** A stable reason for logs and metrics. */
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/** Request headers: a `Headers` (fetch, Deno, Bun, edge) or a plain object in any case (node:http, Express, Fastify). */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** A delivery as received. */
export interface DeliveryInput {
  /** The request body exactly as received, before any JSON parsing: bytes (a Node `Buffer` is fine) or text. */
  rawBody: Uint8Array | ArrayBuffer | string;
  headers: WebhookHeaders;
}

/** The endpoint's signing secret (`whsec_...`), or several while rotating (the old and the new). */
export type WebhookSecrets = { secret: string } | { secrets: readonly string[] };

/** Options of `verifyWebhook` beside the secrets. */
export interface VerifyOptions extends DeliveryInput {
  /** How far `webhook-timestamp` may be from now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time; for tests. Default: the system clock. */
  now?: Date;
}

/** What `verifyWebhook` takes. */
export type VerifyWebhookInput = VerifyOptions & WebhookSecrets;

/** What `verifyWebhookBodySignature` takes: no tolerance, as that scheme signs no time. */
export type BodySignatureInput = DeliveryInput & WebhookSecrets;

const PREFIX = 'whsec_';
const STANDARD = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
const enc = new TextEncoder();

const fail = (reason: WebhookVerificationReason, message: string): never => {
  throw new WebhookVerificationError(reason, message);
};

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}

function bytesOf(body: unknown): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return enc.encode(body);
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return new Uint8Array(body);
  return fail('invalid_payload', 'rawBody must be the bytes or text received, not a parsed object');
}

function secretsOf(input: BodySignatureInput): string[] {
  const secrets = ('secrets' in input ? input.secrets : [input.secret]).filter((s) => typeof s === 'string' && s !== '');
  return secrets.length ? secrets : fail('missing_secret', 'no signing secret given');
}

async function hmac(key: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, data));
}

// Every byte is compared whatever the first difference, so the time taken says nothing about a forged signature.
function same(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

function base64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function hex(text: string): Uint8Array | null {
  if (!/^[0-9a-f]{64}$/.test(text)) return null;
  return Uint8Array.from(text.match(/../g)!, (h) => parseInt(h, 16));
}

function eventOf(body: Uint8Array): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    fail('invalid_payload', 'the body is not JSON');
  }
  const e = event as Partial<WebhookEvent> | null;
  if (typeof e?.event !== 'string' || typeof e.timestamp !== 'string' || typeof e.data !== 'object' || !e.data) {
    fail('invalid_payload', 'the body is not an event');
  }
  return event as WebhookEvent;
}

/**
 * Checks that a delivery comes from Leadwire, signed moments ago, and returns its event, typed. Pass the raw body (never
 * re-serialised JSON) and the request headers. It checks the Standard Webhooks headers: `webhook-signature` (`v1,`
 * base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.body`, keyed with the decoded secret) and `webhook-timestamp`,
 * which must be within `toleranceSeconds` of now, so a captured delivery cannot be replayed later. A delivery without
 * all three `webhook-*` headers is refused (`missing_headers`): it never falls back to the body-only
 * `X-Webhook-Signature`, which signs no time (see {@link verifyWebhookBodySignature}). With `secrets`, any one of them
 * may have signed (secret rotation). `webhook-id` is the same for every attempt and resend of one event to your
 * endpoint: de-duplicate on it, or with {@link dedupeKey}.
 *
 * @throws {WebhookVerificationError} on any failure; its `reason` says which.
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<WebhookEvent> {
  const secrets = secretsOf(input);
  const body = bytesOf(input.rawBody);
  const [id, timestamp, signature] = STANDARD.map((name) => header(input.headers, name));
  if (!id || !timestamp || !signature) {
    const missing = STANDARD.filter((name) => !header(input.headers, name)).join(', ');
    return fail(
      'missing_headers',
      `${missing} missing; X-Webhook-Signature alone signs no timestamp and is checked only by verifyWebhookBodySignature`,
    );
  }
  if (!/^\d{1,12}$/.test(timestamp)) return fail('malformed_header', 'webhook-timestamp is not Unix seconds');
  const now = (input.now ?? new Date()).getTime() / 1000;
  if (Math.abs(now - Number(timestamp)) > (input.toleranceSeconds ?? 300)) {
    fail('timestamp_out_of_tolerance', 'webhook-timestamp is too far from now (a replay, or a clock out of step)');
  }
  const prefix = enc.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const given = signature.split(' ').flatMap((s) => (s.startsWith('v1,') ? [base64(s.slice(3))] : []));
  let ok = false;
  for (const secret of secrets) {
    const key = base64(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
    if (!key) continue;
    const mac = await hmac(key, signed);
    if (given.some((g) => g && same(g, mac))) ok = true;
  }
  if (!ok) fail('invalid_signature', 'no signature matches the body and secret');
  return eventOf(body);
}

/**
 * The weaker check, only for receivers that cannot see the `webhook-*` headers: `X-Webhook-Signature`, the lowercase hex
 * HMAC-SHA256 of the body keyed with the whole `whsec_...` secret. It proves the body came from Leadwire and was not
 * changed, and nothing more: it signs no time and no id, so it does NOT protect against replay (a delivery captured
 * once verifies forever, whatever `X-Webhook-Timestamp` says, which is not signed either) and does not bind the
 * `X-Webhook-*` headers. Record {@link dedupeKey} of every event you accept and refuse one seen before. During a
 * secret rotation only the new secret signs this header.
 *
 * @throws {WebhookVerificationError} on any failure; its `reason` says which.
 */
export async function verifyWebhookBodySignature(input: BodySignatureInput): Promise<WebhookEvent> {
  const secrets = secretsOf(input);
  const body = bytesOf(input.rawBody);
  const plain = header(input.headers, 'x-webhook-signature');
  if (!plain) return fail('missing_headers', 'X-Webhook-Signature missing');
  const given = hex(plain);
  let ok = false;
  for (const secret of secrets) if (given && same(given, await hmac(enc.encode(secret), body))) ok = true;
  if (!ok) fail('invalid_signature', 'no signature matches the body and secret');
  return eventOf(body);
}

type DataOf<N extends WebhookEventName> = WebhookEventOf<N>['data'];

const contact = (d: { contact: { id: string } }) => d.contact.id;
const deal = (d: { deal: { id: string } }) => d.deal.id;
const message = (d: { message: { id: string } }) => d.message.id;
const task = (d: { task: { id: string } }) => d.task.id;
const booking = (d: { booking: { id: string } }) => d.booking.id;
const aiAction = (d: { aiAction: { id: string } }) => d.aiAction.id;

// Typed against the catalogue: a new event, or a record renamed in an event's data, fails typecheck here.
const RECORD: { [N in WebhookEventName]: (data: DataOf<N>) => string } = {
  'contact.created': contact,
  'contact.updated': contact,
  'contact.deleted': contact,
  'contact.stage_changed': contact,
  'contact.score_changed': contact,
  'contact.tag_added': (d) => `${d.contact.id}/${d.tag}`,
  'contact.consent_changed': (d) => d.consent.entryId,
  'deal.created': deal,
  'deal.updated': deal,
  'deal.won': deal,
  'deal.lost': deal,
  'deal.stage_changed': deal,
  'message.sent': message,
  'message.received': message,
  'conversation.created': (d) => d.conversation.id,
  'task.created': task,
  'task.completed': task,
  'booking.created': booking,
  'booking.cancelled': booking,
  'form.submitted': (d) => d.submission.id,
  'ai_action.created': aiAction,
  'ai_action.approved': aiAction,
  'ai_action.rejected': aiAction,
  'tracking.email_opened': (d) => `${d.email.id}/${d.contact.id}`,
  'tracking.link_clicked': (d) => `${d.contact.id}/${d.url}`,
  'tracking.page_visited': (d) => `${d.visit.visitorId}/${d.visit.url}`,
  'tracking.custom_event': (d) => `${d.customEvent.visitorId}/${d.customEvent.name}`,
  'nonprofit.verification_recorded': (d) => d.verification.id,
  'nonprofit.activated': (d) => d.organization.id,
  ping: () => '',
  'webhook.endpoint_disabled': (d) => d.endpoint.id,
  'webhook.endpoint_enabled': (d) => d.endpoint.id,
  'webhook.delivery_failed': (d) => d.delivery.id,
  'webhook.limit_reached': (d) => d.hour,
};

/**
 * The spec's de-duplication key: `event name|timestamp|record id`. Every attempt of a delivery (and a delivery to a
 * second endpoint) of one event gives the same key, while `X-Webhook-Id` changes per attempt. The record is the one the
 * event is about: `data.contact.id` for contact events, `data.deal.id`, `data.message.id`, `data.conversation.id`,
 * `data.task.id`, `data.booking.id`, `data.submission.id` (form.submitted), `data.aiAction.id`, `data.verification.id`,
 * `data.organization.id` (nonprofit.activated), `data.endpoint.id` (webhook.endpoint_*), `data.delivery.id`
 * (webhook.delivery_failed), `data.hour` (webhook.limit_reached). Where one change sends several events of one name at one instant the
 * key adds what tells them apart: the tag (contact.tag_added), the email (tracking.email_opened), the URL
 * (tracking.link_clicked), the visitor and URL (tracking.page_visited). `ping` has no record.
 */
export function dedupeKey(event: WebhookEvent): string {
  const record = RECORD[event.event] as (data: WebhookEvent['data']) => string;
  return `${event.event}|${event.timestamp}|${record(event.data)}`;
}
