import { delayFor, THROTTLE } from '@leadwire/core/accounts/throttle.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { client, PASSWORD, refusal, rest, signUp, uniqueEmail } from './accounts-support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());
// Tests that move the server's clock put it back, so the next test starts at the wall clock's time.
afterEach(() => {
  t.clock.unfreeze();
  t.clock.set(new Date());
});
const MINUTE_MS = 60_000;

/** Each test signs in from its own loopback addresses, so per-address counts never leak between tests. */
let lastOctet = 10;
const address = () => `127.0.0.${++lastOctet}`;

const signInFrom = (from: string, email: string, password: string) => rest(t, 'POST', '/accounts/sign-in', { from, body: { email, password } });

/** Failed attempts `minutesAgo` in the past of the server's clock, as earlier guesses would have left them. */
async function failures(n: number, opts: { email?: string; ip?: string; minutesAgo?: number }) {
  await t.sql(
    `insert into sign_in_attempts (email, ip, succeeded, created_at)
     select coalesce(?, 'guess' || g || '@example.com'), coalesce(?, '10.9.9.9'), false, ?::timestamptz - make_interval(mins => ?)
     from generate_series(1, ?) g`,
    [opts.email ?? null, opts.ip ?? null, t.clock.now(), opts.minutesAgo ?? 1, n],
  );
}

describe('the delay schedule', () => {
  it('waits nothing at first, then doubles up to a cap', () => {
    expect([0, 1, 2, 3, 4].map((n) => delayFor(n, THROTTLE.account))).toEqual([0, 0, 0, 500, 1000]);
    expect([9, 10, 11, 12, 13, 14, 19].map((n) => delayFor(n, THROTTLE.address))).toEqual([0, 250, 500, 1000, 2000, 2000, 2000]);
  });
});

describe('per account', () => {
  it('slows the 4th and 5th wrong password, then refuses the account for a while with 429 and Retry-After', async () => {
    const from = address();
    const owner = await signUp(t);
    t.clock.freeze();
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await signInFrom(from, owner.email, `wrong password ${i}`));
    expect(replies.map((r) => r.body.code)).toEqual(Array(5).fill('invalid_credentials'));
    expect(replies[3]!.ms).toBeGreaterThanOrEqual(500);
    expect(replies[4]!.ms).toBeGreaterThanOrEqual(1000);
    expect(await t.sql('select ip, succeeded from sign_in_attempts where email = ?', [owner.email])).toEqual(Array(5).fill({ ip: from, succeeded: false }));

    // Now even the right password is refused, without being checked, and nothing more is recorded.
    const locked = await signInFrom(from, owner.email, PASSWORD);
    expect(locked).toMatchObject({ status: 429, body: { code: 'too_many_attempts' } });
    expect(Number(locked.headers['retry-after'])).toBe(15 * 60);
    expect(locked.body.retryAfter).toBe(15 * 60);
    expect(await t.sql('select count(*)::int as n from sign_in_attempts where email = ?', [owner.email])).toEqual([{ n: 5 }]);
    // From another address too: the lock is on the account.
    expect((await signInFrom(address(), owner.email, PASSWORD)).status).toBe(429);
    // The address itself is not locked: another account signs in from it.
    const other = await signUp(t);
    expect((await signInFrom(from, other.email, PASSWORD)).status).toBe(200);

    // Once the failures leave the 15-minute window, the account opens again; a moment before, it is still locked.
    t.clock.advance(15 * MINUTE_MS - 1);
    expect(await signInFrom(from, owner.email, PASSWORD)).toMatchObject({ status: 429, headers: { 'retry-after': '1' } });
    t.clock.advance(1);
    expect((await signInFrom(from, owner.email, PASSWORD)).status).toBe(200);
  });

  it('measures the slowdown against an unthrottled attempt made at the same moment', async () => {
    // Side by side, both pay the same scrypt under the same load; the difference is the throttle's 1 s.
    const [fresh, slow] = [uniqueEmail('fresh'), uniqueEmail('slow')];
    await failures(4, { email: slow });
    const [a, b] = await Promise.all([fresh, slow].map((email) => signInFrom(address(), email, 'wrong password')));
    expect([a!.status, b!.status]).toEqual([401, 401]);
    expect(b!.ms - a!.ms).toBeGreaterThanOrEqual(600);
  });

  it('counts only failures since the last successful sign-in', async () => {
    const owner = await signUp(t);
    await failures(4, { email: owner.email, minutesAgo: 3 });
    await t.sql(`insert into sign_in_attempts (email, ip, succeeded, created_at) values (?, '10.9.9.9', true, ?::timestamptz - interval '2 minutes')`, [
      owner.email,
      t.clock.now(),
    ]);
    await failures(1, { email: owner.email, minutesAgo: 1 });
    expect((await signInFrom(address(), owner.email, 'wrong password')).body.code).toBe('invalid_credentials');
  });

  it('locks unknown emails exactly like known ones, so the lock reveals no account', async () => {
    const owner = await signUp(t);
    const nobody = uniqueEmail('nobody');
    await failures(5, { email: owner.email });
    await failures(5, { email: nobody });
    const known = await signInFrom(address(), owner.email, 'x');
    const unknown = await signInFrom(address(), nobody, 'x');
    expect([known.status, unknown.status]).toEqual([429, 429]);
    expect({ ...unknown.body, error: undefined, retryAfter: undefined }).toEqual({ ...known.body, error: undefined, retryAfter: undefined });
  });

  it('counts wrong passwords at the security confirmation too, and refuses through the typed client', async () => {
    const owner = await signUp(t);
    await failures(5, { email: owner.email });
    const err = await refusal(client(t, owner.token).accounts.confirmPassword.mutate({ password: PASSWORD }));
    expect(err).toMatchObject({ status: 429, code: 'too_many_attempts', body: { retryAfter: expect.any(Number) } });
    expect(await refusal(client(t).accounts.signIn.mutate({ email: owner.email, password: PASSWORD }))).toMatchObject({ status: 429 });
  });
});

describe('per address', () => {
  it('slows guessing across many accounts from one address, then refuses the address', async () => {
    const from = address();
    const owner = await signUp(t);
    t.clock.freeze();
    await failures(19, { ip: from });
    const twentieth = await signInFrom(from, uniqueEmail('spray'), 'password1');
    expect(twentieth).toMatchObject({ status: 401, body: { code: 'invalid_credentials' } });
    expect(twentieth.ms).toBeGreaterThanOrEqual(THROTTLE.address.maxDelayMs);

    const locked = await signInFrom(from, owner.email, PASSWORD);
    expect(locked).toMatchObject({ status: 429, body: { code: 'too_many_attempts' } });
    // The oldest failure, a minute old, leaves the window in 14 minutes.
    expect(Number(locked.headers['retry-after'])).toBe(14 * 60);
    // The account is fine from anywhere else.
    expect((await signInFrom(address(), owner.email, PASSWORD)).status).toBe(200);

    t.clock.advance(14 * MINUTE_MS - 1);
    expect((await signInFrom(from, owner.email, PASSWORD)).status).toBe(429);
    t.clock.advance(1);
    expect((await signInFrom(from, owner.email, PASSWORD)).status).toBe(200);
  });

  it('measures the address slowdown against an unthrottled attempt made at the same moment', async () => {
    const [fresh, slow] = [address(), address()];
    await failures(14, { ip: slow });
    const [a, b] = await Promise.all([fresh, slow].map((from) => signInFrom(from, uniqueEmail(), 'wrong password')));
    expect([a!.status, b!.status]).toEqual([401, 401]);
    expect(b!.ms - a!.ms).toBeGreaterThanOrEqual(1500);
  });
});

describe('timing', () => {
  it('an unknown email costs what a wrong password costs (a dummy hash is checked)', async () => {
    const owner = await signUp(t);
    const from = address();
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      wrong.push((await signInFrom(from, owner.email, `wrong ${i}`)).ms);
      unknown.push((await signInFrom(from, uniqueEmail('nobody'), `wrong ${i}`)).ms);
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[1]!;
    expect(median(unknown)).toBeGreaterThanOrEqual(median(wrong) * 0.5);
  });
});
