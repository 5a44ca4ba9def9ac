/**
 * CORS on /api/v1: any origin may call the API from a browser (without credentials, so `*` is safe), preflights for
 * the headers the API uses succeed without a key, and every response exposes the rate-limit headers to scripts.
 */
import { hashKey } from '@leadwire/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { freshMinute, windowStart } from '../support/bursts.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let contactId: string;
beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg();
  contactId = (await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'cors@example.com' } })).body.id;
});
afterAll(async () => t?.close());

const ORIGINS = ['https://shop.example', 'http://localhost:5173', 'null'];
const REQUESTED = ['authorization', 'content-type', 'idempotency-key', 'x-source'];
const MUST_EXPOSE = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'];

const list = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

function preflight(path: string, origin: string, method: string, requestHeaders = REQUESTED.join(',')) {
  return fetch(`${t.v1}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders },
  });
}

function expectPreflightOk(res: Response, method: string, headers: string[]) {
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  expect(list(res.headers.get('access-control-allow-methods'))).toContain(method.toLowerCase());
  const allowed = list(res.headers.get('access-control-allow-headers'));
  if (!allowed.includes('*')) for (const h of headers) expect(allowed).toContain(h.toLowerCase());
}

function expectCorsResponse(r: { status: number; headers: Headers }, label: string) {
  expect(r.headers.get('access-control-allow-origin'), label).toBe('*');
  expect(r.headers.get('access-control-allow-credentials'), label).toBeNull();
  const exposed = list(r.headers.get('access-control-expose-headers'));
  for (const h of MUST_EXPOSE) expect(exposed, `${label}: ${h}`).toContain(h);
}

describe('preflight', () => {
  it('allows POST with the API headers from any origin, without a key', async () => {
    for (const origin of ORIGINS) {
      expectPreflightOk(await preflight('/contacts/upsert', origin, 'POST'), 'POST', REQUESTED);
    }
  });

  it('allows every endpoint, and header names in any case', async () => {
    const cases: [string, string][] = [
      ['/contacts/search', 'GET'],
      ['/contacts/batch-upsert', 'POST'],
      [`/contacts/${contactId}/notes`, 'POST'],
      ['/companies/upsert', 'POST'],
      ['/leads', 'POST'],
    ];
    for (const [path, method] of cases) {
      expectPreflightOk(await preflight(path, 'https://shop.example', method), method, REQUESTED);
    }
    const mixed = 'Authorization, Content-Type, Idempotency-Key, X-Source';
    expectPreflightOk(await preflight('/contacts/upsert', 'https://shop.example', 'POST', mixed), 'POST', REQUESTED);
  });
});

describe('actual responses', () => {
  it('carry allow-origin * and expose the rate-limit headers, on successes and on every kind of error', async () => {
    const origin = { origin: 'https://shop.example' };
    const key = org.publicKey;
    const responses: [string, { status: number; headers: Headers }][] = [
      ['200 search', await call(t, 'GET', '/contacts/search?email=cors@example.com', { key, headers: origin })],
      ['200 upsert', await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'cors2@example.com' }, headers: origin })],
      ['201 note', await call(t, 'POST', `/contacts/${contactId}/notes`, { key, body: { body: 'x' }, headers: origin })],
      ['401', await call(t, 'GET', '/contacts/search?email=cors@example.com', { headers: origin })],
      ['403 surface', await call(t, 'GET', '/contacts/search?email=cors@example.com', { key: org.internalKey, headers: origin })],
      ['404 search', await call(t, 'GET', '/contacts/search?email=nobody@example.com', { key, headers: origin })],
      ['404 path', await call(t, 'GET', '/nope', { key, headers: origin })],
      ['405', await call(t, 'GET', '/contacts/upsert', { key, headers: origin })],
      ['400 validation', await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'bad' }, headers: origin })],
      ['400 malformed', await call(t, 'POST', '/contacts/upsert', { key, body: '{"email":', headers: origin })],
      ['415', await call(t, 'POST', '/contacts/upsert', { key, body: '{}', headers: { ...origin, 'content-type': 'text/plain' } })],
      ['413', await call(t, 'POST', '/contacts/upsert', { key, body: { custom: { x: 'a'.repeat(1_100_000) } }, headers: origin })],
    ];
    const statuses = responses.map(([label, r]) => `${label}:${r.status}`);
    expect(statuses).toEqual(responses.map(([label]) => `${label}:${label.split(' ')[0]}`));
    for (const [label, r] of responses) expectCorsResponse(r, label);
  });

  it('carry them on a 429 too, where retry-after is the header a browser script needs', async () => {
    const key = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'cors-429', type: 'public', permissions: ['contacts:read'] });
    // The key has spent its window in the server clock's current minute.
    freshMinute(t.clock);
    await t.sql(
      `insert into rate_limit_counters (bucket, window_start, count) select 'key:' || id, ?, 600 from api_keys where key_hash = ?`,
      [windowStart(t.clock, 'minute'), hashKey(key)],
    );
    // The first refusal comes from the database's count, the second from the server's memory of it.
    for (const label of ['429', '429 from memory']) {
      const r = await call(t, 'GET', '/contacts/search?email=cors@example.com', { key, headers: { origin: 'https://shop.example' } });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      expectCorsResponse(r, label);
    }
  });
});
