import { passwordHashSlots } from '#core/accounts/passwords.ts';
import { RESET_REQUEST_QUEUE } from '#core/accounts/password.service.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { PASSWORD, rest, uniqueEmail } from './accounts-support.ts';

/**
 * What a stranger can do without an account, per address: sign up and ask for reset emails, each a few times an hour,
 * and learn from neither whether an email is registered any faster. Password checks queue for a hashing slot and are
 * refused with 503 beyond the queue.
 */
let t: TestApp;
const PER_HOUR = 3;
const ENV = {
  SIGNUP_PER_ADDRESS_PER_HOUR: String(PER_HOUR),
  PASSWORD_RESET_PER_ADDRESS_PER_HOUR: String(PER_HOUR),
  // The hashing slots are the process's (its CPU): every app this file starts sets the same.
  PASSWORD_HASH_QUEUE: '2',
};
beforeAll(async () => {
  t = await initTestApp(ENV);
});
afterAll(async () => t?.close());
afterEach(() => {
  t.clock.unfreeze();
  t.clock.set(new Date());
});

let lastOctet = 10;
const address = () => `127.0.1.${++lastOctet}`;
/** 40 minutes into an hour, so the hourly window has 20 minutes left. */
const freezeAtTwentyToTheHour = () => t.clock.freeze(new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 40 * 60_000));

const signUpFrom = (from: string, email: string) =>
  rest(t, 'POST', '/accounts/sign-up', { from, body: { organizationName: 'Probe', email, password: PASSWORD } });
/** An account of its own, signed up from an address of its own so it spends no budget a test counts. */
async function newOwner(): Promise<string> {
  const email = uniqueEmail();
  expect((await signUpFrom(address(), email)).status).toBe(201);
  return email;
}
const resetFrom = (from: string, email: string) => rest(t, 'POST', '/accounts/password-reset/request', { from, body: { email } });
const resetJobs = async (email: string) =>
  (
    await t.sql<{ n: number }>(`select count(*)::int as n from pgboss.job where name = ? and data->>'email' = ?`, [
      RESET_REQUEST_QUEUE,
      email,
    ])
  )[0]!.n;

describe('sign-up per address', () => {
  it('allows 3 attempts an hour, taken emails included; then 429 rate_limited alike for taken and new emails', async () => {
    const taken = await newOwner();
    const from = address();
    freezeAtTwentyToTheHour();
    expect((await signUpFrom(from, uniqueEmail())).status).toBe(201);
    expect(await signUpFrom(from, taken)).toMatchObject({ status: 409, body: { code: 'email_taken' } });
    expect((await signUpFrom(from, uniqueEmail())).status).toBe(201);

    const [forTaken, forNew] = [await signUpFrom(from, taken), await signUpFrom(from, uniqueEmail())];
    for (const r of [forTaken, forNew]) {
      expect(r).toMatchObject({
        status: 429,
        body: { code: 'rate_limited', retryAfter: 20 * 60 },
        headers: { 'retry-after': String(20 * 60) },
      });
    }
    expect(forTaken.body).toEqual(forNew.body);
    // Once spent, the address is refused from memory: the shared counter is not bumped by every refusal of a flood.
    const counted = async () =>
      (
        await t.sql<{ n: number }>(`select coalesce(sum(count), 0)::int as n from rate_limit_counters where bucket = ?`, [
          `sign-up:${from}`,
        ])
      )[0]!.n;
    const before = await counted();
    for (let i = 0; i < 5; i++) expect((await signUpFrom(from, uniqueEmail())).status).toBe(429);
    expect(await counted()).toBe(before);
    // Another address is not affected; this one gets its budget back with the next hour.
    expect((await signUpFrom(address(), uniqueEmail())).status).toBe(201);
    t.clock.advance(20 * 60_000 - 1);
    expect((await signUpFrom(from, uniqueEmail())).status).toBe(429);
    t.clock.advance(1);
    expect((await signUpFrom(from, uniqueEmail())).status).toBe(201);
  });

  it("is remembered per running app: a budget spent on one app's database is not refused by another in the process", async () => {
    const from = address();
    freezeAtTwentyToTheHour();
    for (let i = 0; i < PER_HOUR; i++) expect((await signUpFrom(from, uniqueEmail())).status).toBe(201);
    expect((await signUpFrom(from, uniqueEmail())).status).toBe(429); // now remembered as spent
    const other = await initTestApp(ENV);
    try {
      const r = await rest(other, 'POST', '/accounts/sign-up', {
        from,
        body: { organizationName: 'Probe', email: uniqueEmail(), password: PASSWORD },
      });
      expect(r.status).toBe(201);
    } finally {
      await other.close();
    }
  });

  it('a taken email costs the same hash as a new one: it waits for a hashing slot before it is looked up', async () => {
    const taken = await newOwner();
    const slots = passwordHashSlots();
    const held: (() => void)[] = [];
    for (let i = 0; i < slots.limits.concurrency; i++) held.push(await slots.acquire());
    const pending = [signUpFrom(address(), taken), signUpFrom(address(), uniqueEmail())];
    try {
      await vi.waitFor(() => expect(slots.usage.waiting).toBe(2));
      expect(await t.sql('select 1 from users where email = ?', [taken])).toHaveLength(1);
    } finally {
      for (const release of held) release();
    }
    expect((await Promise.all(pending)).map((r) => r.status)).toEqual([409, 201]);
  });
});

describe('password reset requests per address', () => {
  it('answer known and unknown emails alike with the same work (one queued job), and both spend the budget', async () => {
    const known = await newOwner();
    const unknown = uniqueEmail('nobody');
    const from = address();
    freezeAtTwentyToTheHour();
    const a = await resetFrom(from, known);
    const b = await resetFrom(from, unknown);
    expect(a).toMatchObject({ status: 200, body: { ok: true } });
    expect(b.body).toEqual(a.body);
    expect([await resetJobs(known), await resetJobs(unknown)]).toEqual([1, 1]);

    expect((await resetFrom(from, unknown)).status).toBe(200);
    const [refusedKnown, refusedUnknown] = [await resetFrom(from, known), await resetFrom(from, unknown)];
    expect(refusedKnown).toMatchObject({ status: 429, body: { code: 'rate_limited' }, headers: { 'retry-after': String(20 * 60) } });
    expect(refusedUnknown.body).toEqual(refusedKnown.body);
    // Refused before anything is queued.
    expect([await resetJobs(known), await resetJobs(unknown)]).toEqual([1, 2]);
    expect((await resetFrom(address(), known)).status).toBe(200);
  });
});

describe('hashing slots at the HTTP edge', () => {
  it('queue password checks behind busy slots, and refuse the one beyond the queue with 503 and retry-after', async () => {
    const owner = { email: await newOwner() };
    const slots = passwordHashSlots();
    const held: (() => void)[] = [];
    for (let i = 0; i < slots.limits.concurrency; i++) held.push(await slots.acquire());
    let refused;
    const queued = [rest(t, 'POST', '/accounts/sign-in', { from: address(), body: { email: owner.email, password: PASSWORD } })];
    try {
      queued.push(signUpFrom(address(), uniqueEmail()));
      await vi.waitFor(() => expect(slots.usage.waiting).toBe(2));
      refused = await rest(t, 'POST', '/accounts/sign-in', { from: address(), body: { email: owner.email, password: PASSWORD } });
    } finally {
      for (const release of held) release();
    }
    expect(refused).toMatchObject({ status: 503, body: { code: 'service_unavailable' }, headers: { 'retry-after': '2' } });
    expect((await Promise.all(queued)).map((r) => r.status)).toEqual([200, 201]);
  });
});
