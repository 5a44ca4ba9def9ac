import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'ck_live_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 32 random bytes (256 bits) always fit in 43 base62 digits; fixed length makes malformed keys easy to reject. */
const BODY_LENGTH = 43;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH}}$`);

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out.padStart(BODY_LENGTH, '0');
}

/** A fresh key value: `ck_live_` plus 256 random bits in base62 (no `-` or `_`, so a double-click selects it whole). */
export function generateKeyValue(): string {
  return KEY_PREFIX + base62(randomBytes(32));
}

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** Keys carry 256 bits of entropy, so a fast unsalted hash is enough: nothing is left to brute-force. */
export function hashKey(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The non-secret part shown in key lists: the prefix and the first six characters. */
export function displayPrefix(value: string): string {
  return value.slice(0, KEY_PREFIX.length + 6);
}

/** Reads `Bearer <key>` leniently about case and spacing, strictly about the key itself. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^\s*Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/**
 * A fresh opaque token: `prefix` plus 256 random bits in base62, the same material as API keys. Sessions (`lws_`),
 * password-reset links and invitations use it; like keys, only its sha256 (`hashKey`) is ever stored.
 */
export function generateToken(prefix: string): string {
  return prefix + base62(randomBytes(32));
}
