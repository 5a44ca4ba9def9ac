/**
 * Spec "Limits": 600 requests per minute per Public API key, counted across every server process on the database,
 * with x-ratelimit-* on every counted response (errors included) and 429 rate_limited with retry-after beyond it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst, freshMinute, intHeader } from '../support/bursts.ts';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { killLeftovers, type ServerProcess, startServer } from '../support/process.ts';

const LIMIT = 600;
const PARALLEL = 20;
/** Time a 600-request burst may take (measured about 2.2 s here); a burst must not straddle a minute boundary. */
const BURST_BUDGET_MS = 12_000;

let t: TestApp;
let server: ServerProcess;
/** The same API served by a real second process on the same database; it shares nothing in memory with `t`. */
let peer: TestApp;
beforeAll(async () => {
  t = await initTestApp();
  server = await startServer({ DATABASE_URL: t.runtime.deps.config.DATABASE_URL!, ROLE: 'api', LOG_LEVEL: 'warn' });
  await server.waitReady();
  peer = { ...t, origin: server.origin, v1: `${server.origin}/api/v1` };
});
afterAll(async () => {
  await server?.stop();
  await killLeftovers();
  await t?.close();
});

/** A response with when its request was sent and when the answer arrived. */
type Res = Awaited<ReturnType<typeof call>> & { sent: number; at: number };


/** Seconds until the current minute ends, as x-ratelimit-reset should report it at time `at`. */
const secondsLeft = (at: number) => Math.ceil((60_000 - (at % 60_000)) / 1000);


async function req(app: TestApp, method: string, path: string, opts: Parameters<typeof call>[3] = {}): Promise<Res> {
  const sent = Date.now();
  const r = await call(app, method, path, opts);
  return { ...r, sent, at: Date.now() };
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
  const key = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'burst', type: 'public', permissions: ['contacts:read', 'contacts:write'] });
  return { ...org, key };
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

describe('600 requests per minute per key', () => {
  let exhausted: Awaited<ReturnType<typeof orgWithContact>>;

  it('answers 600 requests, then 429 rate_limited with retry-after; other keys are unaffected', async () => {
    const org = await orgWithContact();
    exhausted = org;
    const sameOrgKey = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'other', type: 'public', permissions: ['contacts:read'] });
    const otherOrg = await orgWithContact();

    await freshMinute(BURST_BUDGET_MS);
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
    await freshMinute(BURST_BUDGET_MS);
    const responses = await burst(LIMIT, PARALLEL, (i) => search(i % 2 ? peer : t, org.key));
    expectFullWindow(responses);
    expectRateLimited(await search(t, org.key));
    expectRateLimited(await search(peer, org.key));
  }, 120_000);

  it('lets the key through again once retry-after has passed', async () => {
    expect(exhausted, 'runs after the first test of this block').toBeDefined();
    const limited = await search(t, exhausted.key);
    if (limited.status === 429) {
      expectRateLimited(limited);
      await sleep(intHeader(limited, 'retry-after') * 1000 + 250);
    }
    const r = await search(t, exhausted.key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expectRateHeaders(r, LIMIT - 1);
  }, 120_000);
});

describe('headers and counting', () => {
  it('puts the headers on error responses too, and counts those requests', async () => {
    const org = await orgWithContact();
    const key = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'errors', type: 'public', permissions: ['contacts:read', 'contacts:write', 'notes:write'] });
    await freshMinute(5_000);
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
    await freshMinute(5_000);
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
