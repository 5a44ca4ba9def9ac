import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * True when the provider's header matches the configured secret. Both sides are hashed first so the comparison takes
 * the same time whatever the length of the guess; no secret configured refuses everything.
 */
export function providerSecretMatches(expected: string | undefined, given: string | undefined): boolean {
  if (!expected || !given) return false;
  return timingSafeEqual(digest(expected), digest(given));
}
