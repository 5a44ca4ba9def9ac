/**
 * Configuration is validated once at boot, and every problem is reported at once: an operator fixing a deployment
 * should not discover them one restart at a time.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN, MAIN, MIGRATE, run } from '../support/process.ts';

const BAD = {
  PORT: 'abc',
  ROLE: 'boss',
  DATABASE_URL: 'mysql://x',
  LOG_LEVEL: 'loud',
  DB_POOL_MAX: '1',
  BASE_URL: 'not a url',
};

describe('invalid configuration', { timeout: 180_000 }, () => {
  it.each([
    ['the server', MAIN, []],
    ['the admin CLI', ADMIN, ['bootstrap', '--org', 'A', '--email', 'a@b.example', '--password', 'long enough']],
    ['the migrate CLI', MIGRATE, []],
  ])('stops %s with a non-zero exit and every problem listed on stderr', async (_name, script, args) => {
    const r = await run(script, args, BAD, 60_000);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Invalid configuration');
    for (const key of Object.keys(BAD)) expect(r.stderr, `${key} is reported`).toMatch(new RegExp(`^\\s+- ${key}: `, 'm'));
    // One line per problem and no stack trace: this is an operator's message, not a crash.
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});
