import { describe, expect, it } from 'vitest';
import { systemResolver, withTimeout } from '#core/webhooks/transport/resolver.ts';
import { checkUrlAddress } from '#core/webhooks/transport/address.ts';

describe('the system resolver', () => {
  it('answers from the system (localhost through /etc/hosts or the resolver)', async () => {
    const answers = await systemResolver('localhost');
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((a) => a === '::1' || a.startsWith('127.'))).toBe(true);
  });

  it('rejects an unknown name with its code', async () => {
    await expect(systemResolver('no-such-host.invalid')).rejects.toMatchObject({ code: expect.stringMatching(/ENOTFOUND|EAI_AGAIN/) });
  });

  it('gives up on a name server that never answers instead of holding the caller', async () => {
    const silent = withTimeout(() => new Promise<string[]>(() => {}), 50);
    await expect(silent('hangs.example.com')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    // And the address check reports it as a reason, not an exception.
    expect(await checkUrlAddress('https://hangs.example.com/hook', { resolver: silent, allowLoopback: false })).toEqual({
      ok: false,
      reason: 'hangs.example.com could not be resolved (ETIMEOUT)',
      kind: 'unresolved',
    });
  });

  it('passes answers through untouched', async () => {
    expect(await withTimeout(async () => ['203.0.113.9'], 1_000)('x.example.com')).toEqual(['203.0.113.9']);
  });
});
