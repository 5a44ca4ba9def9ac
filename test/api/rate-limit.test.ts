/**
 * Spec "Limits": 600 requests per minute per Public API key, counted across every server process on the database,
 * with x-ratelimit-* on every counted response (errors included) and 429 rate_limited with retry-after beyond it.
 */
import { hashKey } from '@leadwire/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst, freshMinute, intHeader, type PeerServer, startPeer, windowStart } from '../support/bursts.ts';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { aboutKey, aboutUser, heard } from '../support/key-changes.ts';

const LIMIT = 600;
const PARALLEL = 20;

let t: TestApp;
let server: PeerServer;
/** The same API served by a second server on the same database; it shares nothing in memory with `t` but the clock. */
let peer: TestApp;
beforeAll(async () => {
  t = await initTestApp();
  server = await startPeer(t);
  peer = { ...t, origin: server.origin, v1: server.v1 };
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

/** A response with the server clock's time when its request was sent and when the answer arrived. */
type Res = Awaited<ReturnType<typeof call>> & { sent: number; at: number };

/** Seconds until the current minute ends, as x-ratelimit-reset should report it at time `at`. */
const secondsLeft = (at: number) => Math.ceil((60_000 - (at % 60_000)) / 1000);

async function req(app: TestApp, method: string, path: string, opts: Parameters<typeof call>[3] = {}): Promise<Res> {
  const sent = t.clock.now().getTime();
  const r = await call(app, method, path, opts);
  return { ...r, sent, at: t.clock.now().getTime() };
}

function expectRateHeaders(r: Res, remaining: number) {
  expect(intHeader(r, 'x-ratelimit-limit')).toBe(LIMIT);
  expect(intHeader(r, 'x-ratelimit-remaining')).toBe(remaining);
  const reset = intHeader(r, 'x-ratelimit-reset');
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
}

function expectRateLimited(r: Res) {
  expect(r.status, JSON.stringify(r.body)).toBe(429);
  expect(Object.keys(r.body).sort()).toEqual(['code', 'error']);
  expect(r.body.code).toBe('rate_limited');
  expect(typeof r.body.error).toBe('string');
  expectRateHeaders(r, 0);
  const retryAfter = intHeader(r, 'retry-after');
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(retryAfter).toBe(intHeader(r, 'x-ratelimit-reset'));
}

/** An org with one contact to look up, so the burst exercises the full happy path (200). */
async function orgWithContact() {
  const org = await t.newOrg();
  const r = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'rl@example.com' } });
  expect(r.status).toBe(200);
  const key = await t.newKey({
    orgId: org.orgId,
    userId: org.userId,
    name: 'burst',
    type: 'public',
    permissions: ['contacts:read', 'contacts:write'],
  });
  await settled(key);
  return { ...org, key };
}

/**
 * Waits until both servers have heard every key change made so far: announcements arrive in commit order, so once a
 * fresh one about `key` is heard, so are the creations before it. A change heard while a look-up of the same key is
 * under way stops the server from remembering that look-up's refusal, which the tests below count on.
 */
async function settled(key: string) {
  const told = Promise.all([t.runtime, server.runtime].map((r) => heard(r, aboutKey(key))));
  await t.sql(`update api_keys set expires_at = expires_at where key_hash = ?`, [hashKey(key)]);
  await told;
}

const search = (app: TestApp, key: string) => req(app, 'GET', '/contacts/search?email=rl@example.com', { key });

function expectFullWindow(responses: Res[]) {
  for (const r of responses) {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(intHeader(r, 'x-ratelimit-limit')).toBe(LIMIT);
    // The server read its clock between sending and answering.
    const reset = intHeader(r, 'x-ratelimit-reset');
    expect(reset).toBeGreaterThanOrEqual(secondsLeft(r.at));
    expect(reset).toBeLessThanOrEqual(secondsLeft(r.sent));
  }
  // Every request got its own count: the remaining values are exactly 599 down to 0, none twice, none skipped.
  const remaining = responses.map((r) => intHeader(r, 'x-ratelimit-remaining')).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
}

/** Sets a key's count in the clock's current minute, as if `count` requests had been made in it. */
async function spend(key: string, count = LIMIT) {
  await t.sql(
    `insert into rate_limit_counters (bucket, window_start, count) select 'key:' || id, ?, ? from api_keys where key_hash = ?
     on conflict (bucket, window_start) do update set count = excluded.count`,
    [windowStart(t.clock, 'minute'), count, hashKey(key)],
  );
}

/** The key's count in the clock's current minute. */
async function counted(key: string): Promise<number> {
  const rows = await t.sql<{ count: number }>(
    `select c.count from rate_limit_counters c join api_keys k on c.bucket = 'key:' || k.id where k.key_hash = ? and c.window_start = ?`,
    [hashKey(key), windowStart(t.clock, 'minute')],
  );
  return Number(rows[0]?.count ?? 0);
}

describe('600 requests per minute per key', () => {
  it('answers 600 requests, then 429 rate_limited with retry-after; other keys are unaffected', async () => {
    const org = await orgWithContact();
    const sameOrgKey = await t.newKey({
      orgId: org.orgId,
      userId: org.userId,
      name: 'other',
      type: 'public',
      permissions: ['contacts:read'],
    });
    const otherOrg = await orgWithContact();

    freshMinute(t.clock);
    const started = Date.now();
    const responses = await burst(LIMIT, PARALLEL, () => search(t, org.key));
    console.info(`rate-limit: ${LIMIT} requests at ${PARALLEL} in parallel took ${Date.now() - started} ms`);
    expectFullWindow(responses);

    expectRateLimited(await search(t, org.key));
    const write = await req(t, 'POST', '/contacts/upsert', { key: org.key, body: { email: 'over-limit@example.com' } });
    expectRateLimited(write);
    expect(await t.sql(`select 1 from contacts where email = 'over-limit@example.com'`)).toHaveLength(0);

    for (const key of [sameOrgKey, otherOrg.key]) {
      const r = await search(t, key);
      expect(r.status).toBe(200);
      expectRateHeaders(r, LIMIT - 1);
    }
  }, 120_000);

  it('counts one window across two server processes on the same database', async () => {
    const org = await orgWithContact();
    freshMinute(t.clock);
    const responses = await burst(LIMIT, PARALLEL, (i) => search(i % 2 ? peer : t, org.key));
    expectFullWindow(responses);
    expectRateLimited(await search(t, org.key));
    expectRateLimited(await search(peer, org.key));
  }, 120_000);

  it('lets the key through again once retry-after has passed, in every server', async () => {
    const org = await orgWithContact();
    freshMinute(t.clock);
    await spend(org.key);
    const limited = await search(t, org.key);
    expectRateLimited(limited);
    expectRateLimited(await search(peer, org.key));
    t.clock.advance(intHeader(limited, 'retry-after') * 1000 - 1000);
    expectRateLimited(await search(t, org.key));
    t.clock.advance(1000);
    for (const app of [t, peer]) {
      const r = await search(app, org.key);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    expect(await counted(org.key)).toBe(2);
  });
});

describe('a spent key is refused from memory, a live key is checked every time', () => {
  it('answers a spent key 429 without counting it again: no round trip', async () => {
    const org = await orgWithContact();
    freshMinute(t.clock);
    await spend(org.key);
    // Each server learns that the key is spent from the database once, then refuses it from memory.
    expectRateLimited(await search(t, org.key));
    expectRateLimited(await search(peer, org.key));
    expect(await counted(org.key)).toBe(LIMIT + 2);
    const refused = await burst(50, 10, (i) => search(i % 2 ? peer : t, org.key));
    refused.forEach(expectRateLimited);
    const write = await req(t, 'POST', '/contacts/upsert', { key: org.key, body: { email: 'spent@example.com' } });
    expectRateLimited(write);
    // Answered before the body is even read: a broken body gets the same 429, not a 400.
    for (const app of [t, peer]) expectRateLimited(await req(app, 'POST', '/contacts/upsert', { key: org.key, body: '{"email":' }));
    expect(await counted(org.key)).toBe(LIMIT + 2);
    expect(await t.sql(`select 1 from contacts where email = 'spent@example.com'`)).toHaveLength(0);
  });

  it('stops a key that is not spent on its very next request after revocation, deactivation or a password change, in every server', async () => {
    const cases: [string, (org: Awaited<ReturnType<typeof orgWithContact>>) => Promise<unknown>][] = [
      ['revoked', (org) => t.sql(`update api_keys set revoked_at = ? where key_hash = ?`, [t.clock.now(), hashKey(org.key)])],
      ['deactivated', (org) => t.sql(`update users set active = false where id = ?`, [org.userId])],
      ['password changed', (org) => t.sql(`update users set credential_epoch = credential_epoch + 1 where id = ?`, [org.userId])],
    ];
    freshMinute(t.clock);
    for (const [label, change] of cases) {
      const org = await orgWithContact();
      // Both servers have just let the key in (it is remembered as good there), and it is close to its limit.
      await spend(org.key, LIMIT - 3);
      expect((await search(t, org.key)).status, label).toBe(200);
      expect((await search(peer, org.key)).status, label).toBe(200);
      await change(org);
      for (const app of [t, peer]) {
        const r = await search(app, org.key);
        expect([label, r.status, r.body.code]).toEqual([label, 401, 'unauthorized']);
      }
    }
  });

  it('answers 401 to a spent key as soon as it is revoked, or its owner is deactivated or changes password, in every server', async () => {
    type Org = Awaited<ReturnType<typeof orgWithContact>>;
    const cases: [string, (org: Org) => Promise<unknown>, (org: Org) => (m: Record<string, unknown>) => boolean][] = [
      [
        'revoked',
        (org) => t.sql(`update api_keys set revoked_at = ? where key_hash = ?`, [t.clock.now(), hashKey(org.key)]),
        (org) => aboutKey(org.key),
      ],
      ['deactivated', (org) => t.sql(`update users set active = false where id = ?`, [org.userId]), (org) => aboutUser(org.userId)],
      [
        'password changed',
        (org) => t.sql(`update users set credential_epoch = credential_epoch + 1 where id = ?`, [org.userId]),
        (org) => aboutUser(org.userId),
      ],
    ];
    for (const [label, change, about] of cases) {
      const org = await orgWithContact();
      freshMinute(t.clock);
      await spend(org.key);
      // Both servers refuse the key, the second time from memory (not counted again).
      for (const app of [t, peer, t, peer]) expectRateLimited(await search(app, org.key));
      expect(await counted(org.key), label).toBe(LIMIT + 2);
      // Both servers have heard the change once this resolves: the positive signal, nothing slept.
      const told = Promise.all([t.runtime, server.runtime].map((r) => heard(r, about(org))));
      await change(org);
      await told;
      for (const app of [t, peer]) {
        const r = await search(app, org.key);
        expect([label, r.status, r.body.code]).toEqual([label, 401, 'unauthorized']);
      }
    }
  });

  it('answers 401 to a spent key once it expires, inside the window it spent', async () => {
    const org = await orgWithContact();
    freshMinute(t.clock);
    // Heard before the key is spent, so that both servers do remember the spent window (a change heard during a
    // look-up voids what it saw).
    const told = Promise.all([t.runtime, server.runtime].map((r) => heard(r, aboutKey(org.key))));
    await t.sql(`update api_keys set expires_at = ? where key_hash = ?`, [new Date(t.clock.now().getTime() + 20_000), hashKey(org.key)]);
    await told;
    await spend(org.key);
    for (const app of [t, peer, t, peer]) expectRateLimited(await search(app, org.key));
    expect(await counted(org.key)).toBe(LIMIT + 2);
    t.clock.advance(20_000);
    for (const app of [t, peer]) {
      const r = await search(app, org.key);
      expect([r.status, r.body.code]).toEqual([401, 'unauthorized']);
    }
  });
});

describe('headers and counting', () => {
  it('puts the headers on error responses too, and counts those requests', async () => {
    const org = await orgWithContact();
    const key = await t.newKey({
      orgId: org.orgId,
      userId: org.userId,
      name: 'errors',
      type: 'public',
      permissions: ['contacts:read', 'contacts:write', 'notes:write'],
    });
    freshMinute(t.clock);
    const responses = [
      await req(t, 'GET', '/contacts/search?email=nobody@example.com', { key }),
      await req(t, 'GET', '/contacts/search?email=not-an-email', { key }),
      await req(t, 'POST', '/contacts/upsert', { key, body: { firstName: 'NoIdentity' } }),
      await req(t, 'POST', '/contacts/upsert', { key, body: { email: 'x@example.com', companyDomain: 'nowhere.example' } }),
      await req(t, 'POST', '/companies/upsert', { key, body: { domain: 'scope.example' } }),
      await req(t, 'POST', '/contacts/00000000-0000-4000-8000-000000000000/notes', { key, body: { body: 'x' } }),
    ];
    expect(responses.map((r) => [r.status, r.body.code])).toEqual([
      [404, 'not_found'],
      [400, 'validation_failed'],
      [400, 'missing_identity'],
      [422, 'company_not_found'],
      [403, 'insufficient_scope'],
      [404, 'not_found'],
    ]);
    responses.forEach((r, i) => expectRateHeaders(r, LIMIT - 1 - i));
  });

  it('does not count an Internal key refused on /v1, nor give it rate-limit headers', async () => {
    const org = await orgWithContact();
    const total = async () => Number((await t.sql<{ n: string }>('select coalesce(sum(count), 0) as n from rate_limit_counters'))[0]!.n);
    freshMinute(t.clock);
    const before = await total();
    for (let i = 0; i < 5; i++) {
      const r = await search(t, org.internalKey);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('wrong_api_surface');
      expect(r.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    expect(await total()).toBe(before);
    // The same user's Public key starts its window untouched.
    const r = await search(t, org.key);
    expectRateHeaders(r, LIMIT - 1);
  });
});
