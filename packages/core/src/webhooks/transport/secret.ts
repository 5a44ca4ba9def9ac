import { randomBytes } from 'node:crypto';

/** Standard Webhooks' secret prefix; the spec's signing secrets begin with it too. */
export const SECRET_PREFIX = 'whsec_';

/**
 * A new signing secret: `whsec_` + base64 of 32 random bytes (the issue asks for at least 24). The base64 part is the
 * Standard Webhooks key; the whole string is the key of `X-Webhook-Signature`, so the one-line check needs no decoding.
 */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}
