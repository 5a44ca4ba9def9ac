/**
 * The HTTP edge: every answer Leadwire sends, at any path and for any bytes, is a success or `{ error, code }` with a
 * documented code, including what is refused before a route runs (oversized heads, undecodable URLs, bytes that are
 * not HTTP, slow requests) and everything outside /api. Sent over raw sockets where fetch() cannot make the request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { RawClient, type RawResponse, rawRequest } from '../support/raw-http.ts';

/** Small enough for a test to see, large enough that no ordinary request comes near them. */
const HEADERS_TIMEOUT_MS = 400;
const REQUEST_TIMEOUT_MS = 800;
const KEEP_ALIVE_TIMEOUT_MS = 300;

let t: TestApp;
let capped: TestApp;
let key: string;
beforeAll(async () => {
  t = await initTestApp({
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
  });
  // Shedding off: this is the hard cap alone (edge-abuse.test.ts has shedding, which closes idle connections first).
  capped = await initTestApp({ HTTP_MAX_CONNECTIONS: '2', HTTP_SHED_AT_PERCENT: '100' });
  key = (await t.newOrg()).publicKey;
});
afterAll(async () => {
  await t?.close();
  await capped?.close();
});

const INTERNALS = /FST_|statusCode|Client Error|Service Unavailable|Request Header Fields|node_modules|\.ts:\d+/;

/** The one error shape, with the given status and code, and nothing of the framework in it. */
function expectError(res: { status: number; headers: Record<string, string> | Headers; body: unknown }, status: number, code: string) {
  const header = (name: string) => (res.headers instanceof Headers ? res.headers.get(name) : res.headers[name]);
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(header('content-type')).toMatch(/^application\/json/);
  // The request's id (issue 19), the same in the header and the body, on the edge's own answers too.
  expect(header('x-request-id')).toMatch(/^[\w.:-]{1,128}$/);
  expect(res.body).toEqual({ error: expect.any(String), code, requestId: header('x-request-id') });
  expect(JSON.stringify(res.body)).not.toMatch(INTERNALS);
}

const head = (requestLine: string, headers: Record<string, string> = {}) =>
  `${requestLine}\r\n${Object.entries({ host: 'localhost', ...headers })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;

async function get(origin: string, path: string, init: RequestInit = {}) {
  const res = await fetch(`${origin}${path}`, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text so that the shape assertion fails on it
  }
  return { status: res.status, headers: res.headers, body };
}

const raw = (r: RawResponse) => ({ status: r.status, headers: r.headers, body: r.json ?? r.body });

describe('requests refused before routing', () => {
  it('headers over 16 KB: 431 headers_too_large, and the connection is closed', async () => {
    const res = await rawRequest(
      t.origin,
      head('GET /api/v1/contacts/search?email=a@example.com HTTP/1.1', { authorization: `Bearer ${key}`, 'x-padding': 'a'.repeat(17_000) }),
    );
    expectError(raw(res), 431, 'headers_too_large');
    expect(res.closed || res.headers.connection === 'close').toBe(true);
  });

  it('a query string over 16 KB: the same 431', async () => {
    const res = await rawRequest(t.origin, head(`GET /api/v1/contacts/search?email=${'a'.repeat(17_000)} HTTP/1.1`));
    expectError(raw(res), 431, 'headers_too_large');
  });

  it('malformed percent-encoding in a path: 400 malformed_url, on every surface and outside them', async () => {
    for (const [method, path] of [
      ['POST', '/api/v1/contacts/%zz/notes'],
      ['GET', '/api/contacts/%E0%A4%A'],
      ['GET', '/%zz'],
      ['GET', '/api/trpc/%zz'],
    ]) {
      const res = await get(t.origin, path!, { method, headers: { authorization: `Bearer ${key}` } });
      expectError(res, 400, 'malformed_url');
    }
  });

  it('bytes that are not HTTP: 400 bad_request', async () => {
    for (const bytes of [
      'GARBAGE\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      'GET /\u0001 HTTP/1.1\r\n\r\n',
    ]) {
      const res = await rawRequest(t.origin, bytes);
      expectError(raw(res), 400, 'bad_request');
    }
  });
});

describe('paths outside /api', () => {
  it('an unknown path is 404 not_found in the shape, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'DELETE', 'PUT', 'PATCH']) {
      for (const path of ['/no-such-page', '/', '/apix', '/healthz/extra']) {
        const res = await get(t.origin, path, { method });
        expectError(res, 404, 'not_found');
      }
    }
  });

  it('a known path with the wrong method is 405 method_not_allowed with Allow', async () => {
    const res = await get(t.origin, '/healthz', { method: 'POST' });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('errors raised on the way to a root answer are in the shape too (body parsing of an unknown path)', async () => {
    const bad = await get(t.origin, '/no-such-page', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    expectError(bad, 400, 'malformed_json');
    const big = await get(t.origin, '/no-such-page', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `"${'x'.repeat(1_100_000)}"`,
    });
    expectError(big, 413, 'payload_too_large');
  });
});

describe('OPTIONS', () => {
  it('without a preflight Origin is answered 204 on both surfaces, not a text/plain 400', async () => {
    for (const path of ['/api/v1/contacts/upsert', '/api/contacts', '/api/trpc/contacts.list']) {
      const res = await fetch(`${t.origin}${path}`, { method: 'OPTIONS' });
      expect(res.status, path).toBe(204);
      expect(await res.text()).toBe('');
    }
  });

  it('lets the hosted application (and only it) call the application surface with every method it uses', async () => {
    const app = new URL(t.runtime.deps.config.APP_URL).origin;
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) {
      const res = await fetch(`${t.origin}/api/webhooks/00000000-0000-4000-8000-000000000000`, {
        method: 'OPTIONS',
        headers: {
          origin: app,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization,x-api-key,content-type',
        },
      });
      expect(res.status, method).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(app);
      expect(
        res.headers
          .get('access-control-allow-methods')
          ?.split(',')
          .map((m) => m.trim()),
      ).toContain(method);
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-api-key');
    }
    const stranger = await fetch(`${t.origin}/api/webhooks`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' },
    });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a real preflight still gets its CORS answer', async () => {
    const res = await fetch(`${t.v1}/contacts/upsert`, {
      method: 'OPTIONS',
      headers: { origin: 'https://partner.example', 'access-control-request-method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('outside /api is a 404 in the shape', async () => {
    expectError(await get(t.origin, '/no-such-page', { method: 'OPTIONS' }), 404, 'not_found');
  });
});

describe('time-outs', () => {
  it('a head sent too slowly is cut off with 408 request_timeout', async () => {
    const client = await RawClient.connect(t.origin);
    try {
      const started = performance.now();
      client.write('GET /api/v1/contacts/search?email=a@example.com HTTP/1.1\r\nhost: x\r\n');
      const res = await client.response(HEADERS_TIMEOUT_MS * 10);
      expectError(raw(res!), 408, 'request_timeout');
      await client.closedByServer();
      expect(performance.now() - started).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    } finally {
      client.close();
    }
  });

  it('a body sent a byte at a time is cut off once the whole request outlasts its time-out', async () => {
    const client = await RawClient.connect(t.origin);
    const started = performance.now();
    const dribble = setInterval(() => client.write('a'), 50);
    try {
      client.write(
        head('POST /api/v1/contacts/upsert HTTP/1.1', {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': '10000',
        }),
      );
      const res = await client.response(REQUEST_TIMEOUT_MS * 10);
      expectError(raw(res!), 408, 'request_timeout');
      await client.closedByServer();
      const ms = performance.now() - started;
      expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS * 5);
    } finally {
      clearInterval(dribble);
      client.close();
    }
    // The server is none the worse for it.
    expect((await fetch(`${t.origin}/healthz`)).status).toBe(200);
  });

  it('an idle keep-alive connection is closed after its time-out', async () => {
    const client = await RawClient.connect(t.origin);
    try {
      client.write(head('GET /healthz HTTP/1.1'));
      expect((await client.response())?.status).toBe(200);
      const answered = performance.now();
      await client.closedByServer(KEEP_ALIVE_TIMEOUT_MS * 20);
      expect(performance.now() - answered).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS - 50);
    } finally {
      client.close();
    }
  });
});

describe('the connection cap', () => {
  it('refuses connections over the cap and accepts again once one closes', async () => {
    const held = [await RawClient.connect(capped.origin), await RawClient.connect(capped.origin)];
    try {
      // Both are accepted: each gets an answer and stays open.
      for (const c of held) {
        c.write(head('GET /healthz HTTP/1.1'));
        expect((await c.response())?.status).toBe(200);
      }
      const extra = await RawClient.connect(capped.origin);
      extra.write(head('GET /healthz HTTP/1.1'));
      await extra.closedByServer();
      expect(extra.received).toBe('');
      expect(held.every((c) => !c.closed)).toBe(true);

      held.pop()!.close();
      // Once the server has seen the close, a new connection is served again.
      for (const deadline = Date.now() + 5_000; ; ) {
        const again = await RawClient.connect(capped.origin);
        again.write(head('GET /healthz HTTP/1.1'));
        const res = await again.response().catch(() => undefined);
        again.close();
        if (res?.status === 200) break;
        if (Date.now() > deadline) throw new Error('a connection under the cap was still refused');
      }
    } finally {
      for (const c of held) c.close();
    }
  });
});

describe('the contracts', () => {
  const operations = (doc: any) =>
    Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item).map(([method, o]) => ({ where: `${method} ${path}`, path, o })),
    );
  /** The codes a status stands for on an operation, a shared response (components.responses) resolved. */
  const codesOf = (doc: any, o: any) => (status: string) => {
    const r = o.responses[status];
    return (r?.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r)?.['x-error-codes'] ?? [];
  };
  const responseOf = (doc: any, o: any, status: string) => {
    const r = o.responses[status];
    return r?.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r;
  };

  // malformed_url on every operation, not only those with a path parameter: a query string can be malformed too
  // (issue 17: `GET /v1/contacts/search?email=%FF` answered a 400 its document did not allow).
  it('list the edge codes on every /v1 operation, malformed_url and too_many_connections included', async () => {
    const doc = await (await fetch(`${t.v1}/docs/json`)).json();
    for (const { where, o } of operations(doc)) {
      const codes = codesOf(doc, o);
      expect(codes('408'), where).toEqual(['request_timeout']);
      expect(codes('431'), where).toEqual(['headers_too_large']);
      expect(codes('503'), where).toEqual(['service_unavailable']);
      expect(codes('429'), where).toContain('too_many_connections');
      expect(responseOf(doc, o, '503').headers['retry-after'], where).toBeDefined();
      expect(codes('400'), where).toContain('malformed_url');
    }
  });

  it('list them on every operation of the internal surface', async () => {
    const doc = await (await fetch(`${t.origin}/api/docs/json`)).json();
    expect(doc.components.headers.RetryAfter).toBeDefined();
    for (const { where, o } of operations(doc)) {
      const codes = codesOf(doc, o);
      for (const [status, code] of [
        ['408', 'request_timeout'],
        ['431', 'headers_too_large'],
        ['503', 'service_unavailable'],
      ]) {
        expect(codes(status!), where).toContain(code);
      }
      expect(codes('429'), where).toContain('too_many_connections');
      expect(codes('400'), where).toContain('malformed_url');
    }
  });
});
