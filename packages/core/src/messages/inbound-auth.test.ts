import { describe, expect, it } from 'vitest';
import { providerSecretMatches } from './inbound-auth.ts';

describe('providerSecretMatches', () => {
  const secret = 'inbound-secret-0123456789';
  it('accepts the exact secret', () => {
    expect(providerSecretMatches(secret, secret)).toBe(true);
  });
  it('refuses a wrong, shorter, longer or missing value', () => {
    expect(providerSecretMatches(secret, 'inbound-secret-0123456780')).toBe(false);
    expect(providerSecretMatches(secret, secret.slice(0, -1))).toBe(false);
    expect(providerSecretMatches(secret, `${secret}x`)).toBe(false);
    expect(providerSecretMatches(secret, undefined)).toBe(false);
    expect(providerSecretMatches(secret, '')).toBe(false);
  });
  it('refuses everything when no secret is configured', () => {
    expect(providerSecretMatches(undefined, 'anything')).toBe(false);
    expect(providerSecretMatches(undefined, undefined)).toBe(false);
    expect(providerSecretMatches('', '')).toBe(false);
  });
});
