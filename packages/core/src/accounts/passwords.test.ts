import { afterEach, describe, expect, it } from 'vitest';
import { dummyPasswordHash, hashPassword, setPasswordHashCost, verifyPassword } from './passwords.ts';

describe('password hashing cost (PASSWORD_HASH_COST)', () => {
  afterEach(() => setPasswordHashCost(17));

  it('hashes new passwords at OWASP’s floor by default, N = 2^17', async () => {
    setPasswordHashCost(17);
    expect((await hashPassword('correct horse')).split('$').slice(0, 4)).toEqual(['scrypt', '131072', '8', '1']);
    expect(dummyPasswordHash().split('$')[1]).toBe('131072');
  });

  it('uses the configured cost for new hashes and the dummy hash, and verifies each hash at the cost it carries', async () => {
    setPasswordHashCost(12);
    const cheap = await hashPassword('correct horse');
    expect(cheap.split('$')[1]).toBe('4096');
    expect(dummyPasswordHash().split('$')[1]).toBe('4096');
    setPasswordHashCost(14);
    // Raising the cost never locks out a password hashed before.
    expect(await verifyPassword('correct horse', cheap)).toBe(true);
    expect(await verifyPassword('wrong horse', cheap)).toBe(false);
    expect(await verifyPassword('correct horse', dummyPasswordHash())).toBe(false);
  });
});
