import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '@leadwire/db';
import * as q from './sql.ts';

/**
 * Consent links are signed, not looked up: `<payload>.<signature>`, both base64url, the signature an HMAC-SHA256 of
 * the payload under the organization's consent key. A link cannot be forged or altered (another entry, a later
 * deadline) without the key, and checking one reads nothing but the key. Addresses are hashed under the same key.
 */

/** The organization's key, made on first use (a concurrent first use keeps the one that won). */
export async function consentKey(db: Db, orgId: string): Promise<Buffer> {
  const [row] = await db.run(q.KEY_OF, { orgId });
  if (row) return Buffer.from(row.key, 'base64url');
  await db.run(q.CREATE_KEY, { orgId, key: randomBytes(32).toString('base64url') });
  const [made] = await db.run(q.KEY_OF, { orgId });
  return Buffer.from(made!.key, 'base64url');
}

/** A confirmation link confirms pending entries; an unsubscribe link withdraws purposes of a contact. */
export type LinkPayload = { k: 'confirm'; o: string; e: string[]; x: number } | { k: 'withdraw'; o: string; c: string; p: string[] };

const mac = (key: Buffer, data: string) => createHmac('sha256', key).update(data).digest();

export function signLink(key: Buffer, payload: LinkPayload): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${mac(key, body).toString('base64url')}`;
}

/** The organization a token names, read before its key is known; null when it is not a token of ours. */
export function orgOfLink(token: string): string | null {
  const payload = decode(token);
  return payload && typeof payload.o === 'string' && /^[0-9a-f-]{36}$/.test(payload.o) ? payload.o : null;
}

function decode(token: string): Record<string, unknown> | null {
  const [body, sig, extra] = token.split('.');
  if (!body || !sig || extra !== undefined || token.length > 2000) return null;
  try {
    const v: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The payload when the signature is the key's; null for anything else (altered, truncated, another workspace's). */
export function verifyLink(key: Buffer, token: string): LinkPayload | null {
  const [body, sig] = token.split('.');
  const payload = decode(token);
  if (!payload || !body || !sig) return null;
  const expected = mac(key, body);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return payload as LinkPayload;
}

/** HMAC-SHA256 of an address under the organization's key, hex: equal addresses match, the address is not kept. */
export const hashAddress = (key: Buffer, ip: string): string => mac(key, `ip:${ip}`).toString('hex');
