/**
 * An event of the feed as a webhook delivery, signed the way the server signs one, so that the receiver `leadwire
 * events tail --forward-to` posts to verifies it with `verifyWebhook` exactly as in production. The result is what
 * `leadwire listen` forwards (listen/forward.ts posts both).
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { StreamedDelivery } from '../listen/forward.ts';

const PREFIX = 'whsec_';

/** A new signing secret in the server's format: `whsec_` and the base64 of 32 random bytes. */
export const newSecret = (): string => PREFIX + randomBytes(32).toString('base64');

/** Whether `value` is a secret the Standard Webhooks signature can use: `whsec_` and base64 of at least 16 bytes. */
export const isSecret = (value: string): boolean =>
  value.startsWith(PREFIX) && /^[A-Za-z0-9+/]+={0,2}$/.test(value.slice(PREFIX.length)) && value.length - PREFIX.length >= 24;

/**
 * The delivery of one event: the body is the event as the feed gave it (the same JSON a webhook carries), the headers
 * those of a delivery attempt: `webhook-id` the event's id (the same on every attempt), `X-Webhook-Id` new per attempt,
 * both signatures over the body with `secret`, timestamps from `nowMs`.
 */
export function deliveryOf(event: { id: string; event: string }, secret: string, nowMs: number): StreamedDelivery {
  const body = JSON.stringify(event);
  const timestamp = String(Math.floor(nowMs / 1000));
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return {
    id: event.id,
    event: event.event,
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Leadwire-Webhooks/1.0',
      'X-Webhook-Signature': createHmac('sha256', secret).update(body, 'utf8').digest('hex'),
      'X-Webhook-Event': event.event,
      'X-Webhook-Timestamp': timestamp,
      'X-Webhook-Id': randomUUID(),
      'webhook-id': event.id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${createHmac('sha256', key).update(`${event.id}.${timestamp}.${body}`, 'utf8').digest('base64')}`,
    },
  };
}
