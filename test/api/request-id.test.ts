/**
 * Issue 19, section 1: a request id on every request, taken from a sane `X-Request-Id` (1-128 characters of letters,
 * digits and `_ . : -`) or made, in the `x-request-id` response header, in every error body as `requestId` and in the
 * request's log lines, on /v1, the internal surface, typed tRPC and the edge's own refusals alike.
 */
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { InternalRouter } from '@leadwire/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, initTestApp, type TestApp } from '../support/app.ts';
import { freshMinute } from '../support/bursts.ts';
import { rawRequest } from '../support/raw-http.ts';
import { waiter } from '../support/waiter.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
const output: string[] = [];
const written = waiter();
beforeAll(async () => {
  const logStream = { write: (line: string) => void (output.push(line), written.wake()) };
  t = await initTestApp({ LOG_LEVEL: 'info' }, { logStream });
  org = await t.newOrg();
});
afterAll(async () => t?.close());

const lines = () => output.map((l) => JSON.parse(l) as Record<string, unknown>);

/** A request with the given `X-Request-Id` (none when undefined); the answer with its id from header and body. */
async function send(path: string, id: string | undefined, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const headers = { ...init.headers, ...(id === undefined ? {} : { 'x-request-id': id }) };
  const r = await answerOf(await fetch(`${t.origin}${path}`, { ...init, headers }), { keepRequestId: true });
  return { ...r, id: r.headers.get('x-request-id') };
}

/** The error answer carries one id, the same in its header and its body. */
function expectIdIn(r: Awaited<ReturnType<typeof send>>, status: number, code: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.code).toBe(code);
  expect(r.id).toBeTruthy();
  expect(r.body.requestId).toBe(r.id);
}

describe('request ids', () => {
  it('echo a sane incoming X-Request-Id in the header, the error body and every log line of the request', async () => {
    for (const id of ['req-1234', '01JDX7Q4V8M2K3N5P6R7S8T9VW', 'trace:span.7_x', 'a'.repeat(128)]) {
      const r = await send('/api/v1/contacts/upsert', id, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expectIdIn(r, 401, 'unauthorized');
      expect(r.id).toBe(id);
      await written.until(
        () => lines().some((l) => l.reqId === id && l.msg === 'request'),
        () => `no request line for ${id}:\n${output.join('')}`,
        5_000,
      );
      expect(lines().find((l) => l.reqId === id && l.msg === 'request')).toMatchObject({ status: 401, path: '/api/v1/contacts/upsert' });
    }
  });

  it('replace an id that is too long, empty, or carries spaces, control characters, non-ASCII or markup', async () => {
    const insane = ['a'.repeat(129), '', 'two words', 'tab\there', 'caf\u00e9', '<script>', 'a/b', 'x;y=1'];
    for (const id of insane) {
      // fetch refuses to send control characters and non-ASCII in a header; the raw request sends them as bytes.
      const res = await rawRequest(t.origin, `GET /api/v1/nowhere HTTP/1.1\r\nhost: x\r\nx-request-id: ${id}\r\nconnection: close\r\n\r\n`);
      expect(res.status, id).toBe(404);
      expect(res.headers['x-request-id'], id).toMatch(UUID);
      expect(res.json.requestId).toBe(res.headers['x-request-id']);
    }
    // A repeated header is joined by Node into one value with a comma and a space: not sane either.
    const twice = await rawRequest(
      t.origin,
      'GET /api/v1/nowhere HTTP/1.1\r\nhost: x\r\nx-request-id: a\r\nx-request-id: b\r\nconnection: close\r\n\r\n',
    );
    expect(twice.headers['x-request-id']).toMatch(UUID);
    expect(output.join('')).not.toContain('<script>');
  });

  it('are made when absent, one per request, also on answers that are not errors', async () => {
    const [a, b] = [await send('/healthz', undefined), await send('/healthz', undefined)];
    expect(a.status).toBe(200);
    expect(a.id).toMatch(UUID);
    expect(b.id).toMatch(UUID);
    expect(a.id).not.toBe(b.id);
  });

  it('are in the header and body of 404, 405, 413, 401 and validation errors on /v1 and the internal surface', async () => {
    const json = { 'content-type': 'application/json' };
    const auth = (key: string) => ({ authorization: `Bearer ${key}`, ...json });
    const cases: [string, RequestInit & { headers?: Record<string, string> }, number, string][] = [
      ['/api/v1/nowhere', {}, 404, 'not_found'],
      ['/api/nowhere', {}, 404, 'not_found'],
      ['/elsewhere', {}, 404, 'not_found'],
      ['/api/v1/contacts/upsert', { method: 'GET' }, 405, 'method_not_allowed'],
      [
        '/api/v1/contacts/upsert',
        { method: 'POST', headers: auth(org.publicKey), body: `{"a":"${'x'.repeat(1_100_000)}"}` },
        413,
        'payload_too_large',
      ],
      [
        '/api/contacts',
        { method: 'POST', headers: auth(org.internalKey), body: `{"a":"${'x'.repeat(1_100_000)}"}` },
        413,
        'payload_too_large',
      ],
      ['/api/v1/contacts/upsert', { method: 'POST', headers: json, body: '{}' }, 401, 'unauthorized'],
      ['/api/contacts', { method: 'GET' }, 401, 'unauthorized'],
      ['/api/v1/contacts/upsert', { method: 'POST', headers: auth(org.publicKey), body: '{"email":"nope"}' }, 400, 'validation_failed'],
      ['/api/v1/contacts/upsert', { method: 'POST', headers: auth(org.publicKey), body: '{"email":' }, 400, 'malformed_json'],
      ['/api/contacts', { method: 'POST', headers: auth(org.internalKey), body: '[1]' }, 400, 'validation_failed'],
      ['/api/contacts?emial=a', { method: 'GET', headers: auth(org.internalKey) }, 400, 'validation_failed'],
      ['/api/v1/contacts/search?q=%FF', { method: 'GET', headers: auth(org.publicKey) }, 400, 'malformed_url'],
    ];
    for (const [path, init, status, code] of cases) {
      const sent = `case-${status}-${code}`;
      expectIdIn(await send(path, sent, init), status, code);
      expectIdIn(await send(path, undefined, init), status, code);
    }
  });

  it('are in the body of 429 rate_limited and of an answer refused before routing', async () => {
    const headers = { authorization: `Bearer ${(await t.newOrg()).internalKey}` };
    let last: Awaited<ReturnType<typeof send>> | undefined;
    // Starter's internal keys get 60 a minute: the 61st of a new key in a fresh minute is over.
    freshMinute(t.clock);
    for (let i = 0; i < 61; i++) last = await send('/api/contacts', `burst-${i}`, { headers });
    expectIdIn(last!, 429, 'rate_limited');
    expect(last!.id).toBe('burst-60');

    const bad = await rawRequest(t.origin, 'GET /%zz HTTP/1.1\r\nhost: x\r\nx-request-id: bad-url-1\r\nconnection: close\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(bad.headers['x-request-id']).toBe('bad-url-1');
    expect(bad.json.requestId).toBe('bad-url-1');
  });

  it('are in a refusal Node answers before any request exists (not HTTP), made by the server', async () => {
    const res = await rawRequest(t.origin, 'NOT HTTP AT ALL\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(res.json).toMatchObject({ code: 'bad_request', requestId: res.headers['x-request-id'] });
  });

  it('go into the data of the jobs a request queues', async () => {
    const email = `reset-${Date.now()}@example.com`;
    const r = await send('/api/accounts/password-reset/request', 'reset-req-1', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(r.status).toBe(200);
    const jobs = await t.sql<{ data: Record<string, unknown> }>(
      `select data from pgboss.job where name = 'accounts.password-reset' and data->>'email' = ?`,
      [email],
    );
    expect(jobs.map((j) => j.data)).toEqual([{ email, requestId: 'reset-req-1' }]);
  });

  it("are in a typed tRPC error's body", async () => {
    const client = createTRPCClient<InternalRouter>({
      links: [httpLink({ url: `${t.origin}/api/trpc`, headers: { authorization: 'Bearer ck_live_nonsense', 'x-request-id': 'trpc-77' } })],
    });
    const err = await client.contacts.list.query({}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TRPCClientError);
    const data = (err as TRPCClientError<InternalRouter>).data as { httpStatus: number; body: Record<string, unknown> };
    expect(data.httpStatus).toBe(401);
    expect(data.body).toEqual({ error: expect.any(String), code: 'unauthorized', requestId: 'trpc-77' });
  });
});
