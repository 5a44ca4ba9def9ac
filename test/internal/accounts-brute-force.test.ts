import { passwordHashSlots } from '#core/accounts/passwords.ts';
import { accountDelayMs, pairDelayS, THROTTLE } from '#core/accounts/throttle.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
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

const signInFrom = (from: string, email: string, password: string) =>
  rest(t, 'POST', '/accounts/sign-in', { from, body: { email, password } });

/**
 * Failed attempts `minutesAgo` in the past of the server's clock, as earlier guesses would have left them: each from
 * its own address unless `ip` is given, on its own email unless `email` is.
 */
async function failures(n: number, opts: { email?: string; ip?: string; minutesAgo?: number }) {
  await t.sql(
    `insert into sign_in_attempts (email, ip, succeeded, created_at)
     select coalesce(?, 'guess' || g || '@example.com'), coalesce(?, '10.9.' || (g / 250) || '.' || (g % 250)), false,
       ?::timestamptz - make_interval(mins => ?)
     from generate_series(1, ?) g`,
    [opts.email ?? null, opts.ip ?? null, t.clock.now(), opts.minutesAgo ?? 1, n],
  );
}
const attemptsOf = async (email: string) =>
  (await t.sql<{ n: number }>('select count(*)::int as n from sign_in_attempts where email = ?', [email]))[0]!.n;

describe('the schedules', () => {
  it('a pair gets 3 free failures, then waits 1 s doubling up to 15 minutes; an account slows from 10, up to 8 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 12, 13, 40].map(pairDelayS)).toEqual([0, 0, 0, 1, 2, 4, 8, 512, 900, 900]);
    expect([9, 10, 11, 12, 13, 14, 50].map(accountDelayMs)).toEqual([0, 500, 1000, 2000, 4000, 8000, 8000]);
  });
});

describe('per account and address pair', () => {
  it('five wrong passwords from five addresses do not lock the owner out: the right one signs in from a sixth, and from each of the five', async () => {
    const owner = await signUp(t);
    t.clock.freeze();
    const five = Array.from({ length: 5 }, address);
    for (const from of five) expect((await signInFrom(from, owner.email, 'wrong password')).body.code).toBe('invalid_credentials');
    expect((await signInFrom(address(), owner.email, PASSWORD)).status).toBe(200);
    for (const from of five) expect((await signInFrom(from, owner.email, PASSWORD)).status).toBe(200);
  });

  it('the guessing pair waits growing delays (429 with Retry-After, nothing checked or counted), while the owner signs in elsewhere', async () => {
    const owner = await signUp(t);
    const attacker = address();
    t.clock.freeze();
    for (let i = 0; i < 3; i++) expect((await signInFrom(attacker, owner.email, `wrong ${i}`)).status).toBe(401);
    for (const delay of [1, 2, 4, 8]) {
      const refused = await signInFrom(attacker, owner.email, 'another guess');
      expect(refused).toMatchObject({
        status: 429,
        body: { code: 'too_many_attempts', retryAfter: delay },
        headers: { 'retry-after': String(delay) },
      });
      // Refused unchecked: even the right password waits, and the refusal is not another failure.
      expect((await signInFrom(attacker, owner.email, PASSWORD)).status).toBe(429);
      expect((await signInFrom(address(), owner.email, PASSWORD)).status).toBe(200);
      t.clock.advance(delay * 1000 - 1);
      expect((await signInFrom(attacker, owner.email, 'another guess')).status).toBe(429);
      t.clock.advance(1);
      expect((await signInFrom(attacker, owner.email, 'another guess')).status).toBe(401);
    }
    expect(
      await t.sql('select count(*)::int as n from sign_in_attempts where email = ? and ip = ? and not succeeded', [owner.email, attacker]),
    ).toEqual([{ n: 7 }]);
    // Someone at that address with the right password, once the delay is over, wipes the pair's slate.
    t.clock.advance(16_000);
    expect((await signInFrom(attacker, owner.email, PASSWORD)).status).toBe(200);
    t.clock.advance(1);
    for (let i = 0; i < 3; i++) expect((await signInFrom(attacker, owner.email, `wrong again ${i}`)).status).toBe(401);
    expect((await signInFrom(attacker, owner.email, 'and again')).status).toBe(429);
  });

  it('forgets failures that left the 15-minute window', async () => {
    const owner = await signUp(t);
    const from = address();
    t.clock.freeze();
    await failures(12, { email: owner.email, ip: from, minutesAgo: 1 });
    // 12 failures: 512 s after the last, which was a minute ago.
    expect(await signInFrom(from, owner.email, PASSWORD)).toMatchObject({ status: 429, headers: { 'retry-after': String(512 - 60) } });
    t.clock.advance(14 * MINUTE_MS);
    expect((await signInFrom(from, owner.email, PASSWORD)).status).toBe(200);
  });

  it('throttles unknown emails exactly like known ones, so a refusal reveals no account', async () => {
    const owner = await signUp(t);
    const nobody = uniqueEmail('nobody');
    const [a, b] = [address(), address()];
    t.clock.freeze();
    await failures(3, { email: owner.email, ip: a, minutesAgo: 0 });
    await failures(3, { email: nobody, ip: b, minutesAgo: 0 });
    const known = await signInFrom(a, owner.email, 'x');
    const unknown = await signInFrom(b, nobody, 'x');
    expect([known.status, unknown.status]).toEqual([429, 429]);
    expect(unknown.body).toEqual(known.body);
    expect(unknown.headers['retry-after']).toBe(known.headers['retry-after']);
  });

  it('counts wrong passwords at the security confirmation too, and refuses through the typed client', async () => {
    const owner = await signUp(t);
    t.clock.freeze();
    // The typed client calls from 127.0.0.1.
    await failures(3, { email: owner.email, ip: '127.0.0.1', minutesAgo: 0 });
    const err = await refusal(client(t, owner.token).accounts.confirmPassword.mutate({ password: PASSWORD }));
    expect(err).toMatchObject({ status: 429, code: 'too_many_attempts', body: { retryAfter: 1 } });
    expect(await refusal(client(t).accounts.signIn.mutate({ email: owner.email, password: PASSWORD }))).toMatchObject({ status: 429 });
    expect((await signInFrom(address(), owner.email, PASSWORD)).status).toBe(200);
  });
});

describe('per address (password spraying)', () => {
  it('an address that spent its budget on many accounts is refused for each, but not for an account that signed in from it', async () => {
    const sprayer = address();
    const owner = await signUp(t);
    const regular = await signUp(t);
    expect((await signInFrom(sprayer, regular.email, PASSWORD)).status).toBe(200);
    t.clock.freeze();
    await failures(THROTTLE.address.budget - 1, { ip: sprayer, minutesAgo: 1 });
    expect((await signInFrom(sprayer, uniqueEmail('spray'), 'password1')).status).toBe(401);

    const refused = await signInFrom(sprayer, owner.email, PASSWORD);
    expect(refused).toMatchObject({ status: 429, body: { code: 'too_many_attempts' } });
    // The oldest failure, a minute old, leaves the window in 14 minutes.
    expect(Number(refused.headers['retry-after'])).toBe(14 * 60);
    expect(await attemptsOf(owner.email)).toBe(0);
    // The same account from any other address, and the account that signed in from this one, are not affected.
    expect((await signInFrom(address(), owner.email, PASSWORD)).status).toBe(200);
    expect((await signInFrom(sprayer, regular.email, PASSWORD)).status).toBe(200);

    t.clock.advance(14 * MINUTE_MS - 1);
    expect((await signInFrom(sprayer, owner.email, PASSWORD)).status).toBe(429);
    t.clock.advance(1);
    expect((await signInFrom(sprayer, owner.email, PASSWORD)).status).toBe(200);
  });
});

describe('per account, across addresses (a botnet on one password)', () => {
  it('slows checks from addresses the account does not know, on the server clock; never refuses the right password; spares the owner\u2019s own address', async () => {
    const owner = await signUp(t);
    const home = address();
    expect((await signInFrom(home, owner.email, PASSWORD)).status).toBe(200);
    t.clock.freeze();
    t.clock.advance(2 * MINUTE_MS);
    await failures(THROTTLE.account.slowFrom, { email: owner.email, minutesAgo: 1 });

    // From home: checked at once, nothing sleeps.
    expect((await signInFrom(home, owner.email, PASSWORD)).status).toBe(200);
    expect(t.clock.sleeping).toBe(0);

    for (const password of [PASSWORD, 'a botnet guess']) {
      // A success ends the slow-down (failures before it stop counting); a moment later the botnet goes on.
      t.clock.advance(1000);
      await failures(THROTTLE.account.slowFrom + 1, { email: owner.email, minutesAgo: 0 });
      let answered = false;
      const pending = signInFrom(address(), owner.email, password).then((r) => ((answered = true), r));
      await vi.waitFor(() => expect(t.clock.sleeping).toBe(1));
      expect(answered).toBe(false);
      t.clock.advance(accountDelayMs(THROTTLE.account.slowFrom + 1));
      expect((await pending).status).toBe(password === PASSWORD ? 200 : 401);
    }
  });
});

describe('timing', () => {
  it('an unknown email costs what a wrong password costs: it waits for a hashing slot like any check', async () => {
    const { email } = await signUp(t);
    const slots = passwordHashSlots();
    const held: (() => void)[] = [];
    for (let i = 0; i < slots.limits.concurrency; i++) held.push(await slots.acquire());
    const pending = [signInFrom(address(), uniqueEmail('nobody'), 'wrong'), signInFrom(address(), email, 'wrong')];
    try {
      await vi.waitFor(() => expect(slots.usage.waiting).toBe(2));
    } finally {
      for (const release of held) release();
    }
    const [unknown, wrong] = await Promise.all(pending);
    expect(unknown!.status).toBe(401);
    expect(unknown!.body).toEqual(wrong!.body);
  });
});
