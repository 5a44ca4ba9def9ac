/**
 * The public edge under connection abuse, with no key: bodies trickled or stalled, many connections from one address,
 * and the connection table filled by slow clients from many addresses. Real sockets from many loopback addresses
 * (Linux routes all of 127.0.0.0/8 to lo); every limit is configured small so that nothing is waited out.
 */
import { type FakeClamd, startFakeClamd } from '#core/files/fake-clamd.test-support.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { RawClient, type RawResponse } from '../support/raw-http.ts';

const GRACE_MS = 800;
const MIN_RATE = 1_000;
const IDLE_MS = 200;
/** Far beyond every wait below: a cut seen here comes from the new rules, not from the whole-request time-out. */
const REQUEST_TIMEOUT_MS = 60_000;
const PER_ADDRESS = 3;

let clamd: FakeClamd;
let t: TestApp;
let proxied: TestApp;
let crowded: TestApp;
beforeAll(async () => {
  clamd = await startFakeClamd();
  [t, proxied, crowded] = await Promise.all([
    initTestApp({
      CLAMAV_HOST: clamd.host,
      CLAMAV_PORT: String(clamd.port),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_BODY_GRACE_MS: String(GRACE_MS),
      HTTP_BODY_MIN_RATE_BYTES_PER_S: String(MIN_RATE),
      HTTP_BODY_IDLE_TIMEOUT_MS: String(IDLE_MS),
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
    }),
    initTestApp({ TRUST_PROXY: 'true', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '2' }),
    // Slow bodies are left alone here (long grace and idle time-outs): only shedding can make room.
    initTestApp({
      HTTP_MAX_CONNECTIONS: '50',
      HTTP_SHED_AT_PERCENT: '80',
      HTTP_SHED_MIN_AGE_MS: '1000',
      HTTP_BODY_GRACE_MS: '60000',
      HTTP_BODY_IDLE_TIMEOUT_MS: '60000',
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.close(), proxied?.close(), crowded?.close()]);
  await clamd?.close();
});

const head = (requestLine: string, headers: Record<string, string> = {}) =>
  `${requestLine}\r\n${Object.entries({ host: 'localhost', ...headers })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;

/** The head of a JSON body that will never all arrive: the attack of the issue, at any path. */
const slowPost = (path: string) => head(`POST ${path} HTTP/1.1`, { 'content-type': 'application/json', 'content-length': '100000' });

function expectError(res: RawResponse | undefined, status: number, code: string) {
  expect(res?.status, JSON.stringify(res)).toBe(status);
  expect(res!.headers['content-type']).toMatch(/^application\/json/);
  expect(res!.json).toEqual({ error: expect.any(String), code, requestId: res!.headers['x-request-id'] });
}

async function healthz(origin: string, from: string, headers: Record<string, string> = {}): Promise<RawClient> {
  const c = await RawClient.connect(origin, from);
  c.write(head('GET /healthz HTTP/1.1', headers));
  return c;
}

describe('request bodies', () => {
  it('a trickle is cut with 408 once the grace is over, whatever the number of addresses', async () => {
    const paths = ['/api/v1/contacts/upsert', '/no-such-page', '/api/contacts'];
    const clients = await Promise.all(Array.from({ length: 30 }, (_, i) => RawClient.connect(t.origin, `127.0.2.${i + 1}`)));
    const started = performance.now();
    clients.forEach((c, i) => c.write(slowPost(paths[i % paths.length]!)));
    // 20 bytes a second, each well within the idle time-out: only the rate rule can cut these.
    const dribble = setInterval(() => clients.forEach((c) => c.write('a')), 50);
    try {
      const answers = await Promise.all(clients.map((c) => c.response(GRACE_MS * 8)));
      const ms = performance.now() - started;
      for (const res of answers) expectError(res, 408, 'request_timeout');
      await Promise.all(clients.map((c) => c.closedByServer()));
      expect(ms).toBeGreaterThanOrEqual(GRACE_MS - 50);
      expect(ms).toBeLessThan(GRACE_MS * 8);
    } finally {
      clearInterval(dribble);
      clients.forEach((c) => c.close());
    }
  });

  it('a body that stalls after one byte is cut after the idle time-out, not the request time-out', async () => {
    const c = await RawClient.connect(t.origin, '127.0.2.100');
    try {
      const started = performance.now();
      c.write(`${slowPost('/api/v1/contacts/upsert')}{`);
      const res = await c.response(GRACE_MS * 4);
      expectError(res, 408, 'request_timeout');
      await c.closedByServer();
      const ms = performance.now() - started;
      expect(ms).toBeGreaterThanOrEqual(IDLE_MS - 50);
      // Before the grace is over: the idle rule, not the rate rule, cut it.
      expect(ms).toBeLessThan(GRACE_MS);
    } finally {
      c.close();
    }
  });

  it('a steady slow body above the minimum rate is received whole and answered', async () => {
    const c = await RawClient.connect(t.origin, '127.0.2.101');
    const body = JSON.stringify({ padding: 'x'.repeat(2_400) });
    const chunk = 100;
    // 2,500 bytes a second for about 1 s: past the grace, above the minimum rate, never idle.
    c.write(head('POST /no-such-page HTTP/1.1', { 'content-type': 'application/json', 'content-length': String(body.length) }));
    let sent = 0;
    const started = performance.now();
    await new Promise<void>((resolve) => {
      const pump = setInterval(() => {
        c.write(body.slice(sent, sent + chunk));
        sent += chunk;
        if (sent >= body.length) {
          clearInterval(pump);
          resolve();
        }
      }, 40);
    });
    try {
      expect(performance.now() - started).toBeGreaterThan(GRACE_MS);
      // A 404 is the answer of a request received whole: the body was read to its end and routed.
      expectError(await c.response(), 404, 'not_found');
    } finally {
      c.close();
    }
  });

  it('a real 25 MB upload on the contact-file route is received whole, under the same rules', async () => {
    const org = await t.newOrg();
    const [contact] = await t.sql<{ id: string }>(`insert into contacts (organization_id, email) values (?, ?) returning id`, [
      org.orgId,
      'big@example.com',
    ]);
    const size = 25 * 1024 * 1024;
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(size).fill(7)], { type: 'application/octet-stream' }), 'big.bin');
    const res = await fetch(`${t.origin}/api/contacts/${contact!.id}/files`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${org.internalKey}` },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ size, filename: 'big.bin' });
  });
});

describe('connections per address', () => {
  it('refuses a connection over the cap from one address while another address still gets in', async () => {
    const held = await Promise.all(Array.from({ length: PER_ADDRESS }, () => healthz(t.origin, '127.0.3.1')));
    try {
      for (const c of held) expect((await c.response())?.status).toBe(200);
      const extra = await healthz(t.origin, '127.0.3.1');
      await extra.closedByServer();
      // Closed before a byte was read: there was no request to answer yet.
      expect(extra.received).toBe('');
      const other = await healthz(t.origin, '127.0.3.2');
      expect((await other.response())?.status).toBe(200);
      other.close();
      expect(held.every((c) => !c.closed)).toBe(true);

      held.pop()!.close();
      // Once the server has seen the close, the address may open one again.
      for (const deadline = Date.now() + 5_000; ; ) {
        const again = await healthz(t.origin, '127.0.3.1');
        const res = await again.response().catch(() => undefined);
        again.close();
        if (res?.status === 200) break;
        if (Date.now() > deadline) throw new Error('a connection under the cap was still refused');
      }
    } finally {
      held.forEach((c) => c.close());
    }
  });

  it('behind TRUST_PROXY counts the forwarded address and answers 429 too_many_connections', async () => {
    const as = (client: string) => ({ 'x-forwarded-for': client });
    // Every connection comes from the proxy's one address; the cap is the forwarded client's.
    const held = [
      await healthz(proxied.origin, '127.0.5.1', as('203.0.113.5')),
      await healthz(proxied.origin, '127.0.5.1', as('203.0.113.5')),
    ];
    try {
      for (const c of held) expect((await c.response())?.status).toBe(200);
      const extra = await healthz(proxied.origin, '127.0.5.1', as('203.0.113.5'));
      const refused = await extra.response();
      expectError(refused, 429, 'too_many_connections');
      expect(refused!.headers.connection).toBe('close');
      await extra.closedByServer();
      const others = [
        await healthz(proxied.origin, '127.0.5.1', as('203.0.113.6')),
        await healthz(proxied.origin, '127.0.5.1', as('203.0.113.7')),
      ];
      for (const c of others) expect((await c.response())?.status).toBe(200);
      others.forEach((c) => c.close());
    } finally {
      held.forEach((c) => c.close());
    }
  });
});

describe('a full connection table', () => {
  it('sheds the connections that sent the least, so a well-behaved client still gets every answer', async () => {
    const attackers = new Set<RawClient>();
    const answers: number[] = [];
    let running = true;
    // 60 addresses against a table of 50, each reconnecting shortly after it is closed, each trickling a body.
    const attack = async (from: string) => {
      while (running) {
        const c = await RawClient.connect(crowded.origin, from).catch(() => undefined);
        if (c && !running) c.close();
        else if (c) {
          attackers.add(c);
          c.write(slowPost('/api/v1/contacts/upsert'));
          const dribble = setInterval(() => c.write('a'), 200);
          await c.closedByServer(60_000).catch(() => undefined);
          clearInterval(dribble);
          attackers.delete(c);
          const res = await c.response(0).catch(() => undefined);
          if (res) answers.push(res.status);
          c.close();
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const loops = Array.from({ length: 60 }, (_, i) => attack(`127.0.4.${i + 1}`));
    try {
      // The attack holds the table: the server counts at least as many connections as its shedding mark.
      const serverSide = () => new Promise<number>((resolve) => crowded.app.server.getConnections((_err, n) => resolve(n)));
      for (const deadline = Date.now() + 10_000; (await serverSide()) < 40; await new Promise((r) => setTimeout(r, 10))) {
        if (Date.now() > deadline) throw new Error(`the attackers never held the table (${await serverSide()} open)`);
      }
      for (let i = 0; i < 20; i++) {
        const c = await healthz(crowded.origin, '127.0.4.200', { connection: 'close' });
        const res = await c.response(5_000).catch(() => undefined);
        c.close();
        expect(res?.status, `request ${i + 1}: ${JSON.stringify(c.received)}`).toBe(200);
      }
    } finally {
      running = false;
      attackers.forEach((c) => c.close());
      await Promise.all(loops);
    }
    // A shed body was answered in the shape before its connection closed.
    expect(answers.length).toBeGreaterThan(0);
    expect(new Set(answers)).toEqual(new Set([503]));
  });
});
