import { createHmac } from 'node:crypto';
import { SECRET_PREFIX } from './secret.ts';

export const USER_AGENT = 'Leadwire-Webhooks/1.0';

/** Standard Webhooks' key: the base64 part of the secret, decoded (the spec's `whsec_` convention). */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

function standardSignature(secret: string, signedContent: string): string {
  return `v1,${createHmac('sha256', standardKey(secret)).update(signedContent, 'utf8').digest('base64')}`;
}

/**
 * Every header of one delivery attempt, signed both ways:
 * - `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the body's UTF-8 bytes keyed with the WHOLE secret string
 *   (`whsec_...`), so a receiver's one-liner needs no decoding; always the current secret only.
 * - Standard Webhooks: `webhook-id` is the message id (the same for every attempt, redelivery and recovery of one
 *   event to one endpoint, as that standard wants for de-duplication), `webhook-signature` signs `id.timestamp.body`
 *   with the decoded key; while a previous secret is still in its grace period a second `v1,` signature for it
 *   follows, space separated, so a receiver can roll.
 * `X-Webhook-Id` is the attempt id (new on every attempt, as the spec says); both timestamps are the same Unix seconds.
 */
export function signDelivery(input: {
  body: string;
  secret: string;
  previousSecret?: string | null;
  messageId: string;
  attemptId: string;
  event: string;
  at: Date;
}): Record<string, string> {
  const timestamp = String(Math.floor(input.at.getTime() / 1000));
  const signedContent = `${input.messageId}.${timestamp}.${input.body}`;
  const signatures = [standardSignature(input.secret, signedContent)];
  if (input.previousSecret) signatures.push(standardSignature(input.previousSecret, signedContent));
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'X-Webhook-Signature': createHmac('sha256', input.secret).update(input.body, 'utf8').digest('hex'),
    'X-Webhook-Event': input.event,
    'X-Webhook-Timestamp': timestamp,
    'X-Webhook-Id': input.attemptId,
    'webhook-id': input.messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures.join(' '),
  };
}
