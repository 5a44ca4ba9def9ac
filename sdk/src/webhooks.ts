/**
 * Verifying Leadwire webhook deliveries with Web Crypto only, so one file runs in Node 20+, Deno, Bun, edge runtimes and
 * browsers. Event types come from the v1 OpenAPI document's `webhooks` (generated, see ./generated/v1.ts) as TYPES only:
 * nothing of the server ends up in a bundle or in the published declarations.
 */
import type { webhooks } from './generated/v1.ts';

/** The names of every event of the catalogue. */
export type WebhookEventName = keyof webhooks;

type BodyOf<N extends WebhookEventName> = webhooks[N]['post'] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** One delivered event of the catalogue; narrow it with `switch (event.event)`. */
export type WebhookEvent = { [N in WebhookEventName]: BodyOf<N> }[WebhookEventName];

/** The event of one name, e.g. `WebhookEventOf<'contact.created'>`. */
export type WebhookEventOf<N extends WebhookEventName> = Extract<WebhookEvent, { event: N }>;

/** Why a delivery was refused. */
export type WebhookVerificationReason =
  | 'missing_secret'
  | 'missing_signature'
  | 'malformed_header'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_payload';

/** The one error `verifyWebhook` throws; answer the delivery with a 4xx (400 or 401) when you catch it. */
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

/** Options shared by both ways of passing secrets. */
export interface VerifyOptions {
  /** The request body exactly as received, before any JSON parsing: bytes (a Node `Buffer` is fine) or text. */
  rawBody: Uint8Array | ArrayBuffer | string;
  headers: WebhookHeaders;
  /** How far `webhook-timestamp` may be from now, in seconds (Standard Webhooks only). Default 300. */
  toleranceSeconds?: number;
  /** The current time; for tests. Default: the system clock. */
  now?: Date;
}

/** What `verifyWebhook` takes: the endpoint's signing secret, or several while rotating (the old and the new). */
export type VerifyWebhookInput = VerifyOptions & ({ secret: string } | { secrets: readonly string[] });

const PREFIX = 'whsec_';
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

/** Standard Webhooks: `v1,<base64>` signatures (space separated) of `id.timestamp.body`, keyed with the decoded secret. */
async function standard(body: Uint8Array<ArrayBuffer>, secrets: readonly string[], input: VerifyWebhookInput, signature: string): Promise<boolean> {
  const id = header(input.headers, 'webhook-id');
  const timestamp = header(input.headers, 'webhook-timestamp');
  if (!id || !timestamp) return fail('missing_signature', 'webhook-signature needs webhook-id and webhook-timestamp');
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
  for (const secret of secrets) {
    const key = base64(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
    if (!key) continue;
    const mac = await hmac(key, signed);
    if (given.some((g) => g && same(g, mac))) return true;
  }
  return false;
}

/**
 * Checks that a delivery comes from Leadwire and returns its event, typed. Pass the raw body (never re-serialised JSON)
 * and the request headers. When the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`)
 * are present they are checked, timestamp included (replays older than `toleranceSeconds` are refused); otherwise
 * `X-Webhook-Signature` (hex HMAC-SHA256 of the body keyed with the whole `whsec_...` secret), which carries no
 * timestamp: de-duplicate with {@link dedupeKey}. With `secrets`, any one of them may have signed (secret rotation).
 *
 * @throws {WebhookVerificationError} on any failure; its `reason` says which.
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<WebhookEvent> {
  const secrets = ('secrets' in input ? input.secrets : [input.secret]).filter((s) => typeof s === 'string' && s !== '');
  if (secrets.length === 0) fail('missing_secret', 'no signing secret given');
  const body = bytesOf(input.rawBody);
  const std = header(input.headers, 'webhook-signature');
  const plain = header(input.headers, 'x-webhook-signature');
  let ok: boolean;
  if (std) ok = await standard(body, secrets, input, std);
  else if (plain) {
    const given = hex(plain);
    ok = false;
    for (const secret of secrets) if (given && same(given, await hmac(enc.encode(secret), body))) ok = true;
  } else return fail('missing_signature', 'neither webhook-signature nor X-Webhook-Signature is present');
  if (!ok) fail('invalid_signature', 'no signature matches the body and secret');
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
  'nonprofit.verification_recorded': (d) => d.verification.id,
  'nonprofit.activated': (d) => d.organization.id,
  ping: () => '',
};

/**
 * The spec's de-duplication key: `event name|timestamp|record id`. Every attempt of a delivery (and a delivery to a
 * second endpoint) of one event gives the same key, while `X-Webhook-Id` changes per attempt. The record is the one the
 * event is about: `data.contact.id` for contact events, `data.deal.id`, `data.message.id`, `data.conversation.id`,
 * `data.task.id`, `data.booking.id`, `data.submission.id` (form.submitted), `data.aiAction.id`, `data.verification.id`,
 * `data.organization.id` (nonprofit.activated). Where one change sends several events of one name at one instant the
 * key adds what tells them apart: the tag (contact.tag_added), the email (tracking.email_opened), the URL
 * (tracking.link_clicked), the visitor and URL (tracking.page_visited). `ping` has no record.
 */
export function dedupeKey(event: WebhookEvent): string {
  const record = RECORD[event.event] as (data: WebhookEvent['data']) => string;
  return `${event.event}|${event.timestamp}|${record(event.data)}`;
}
