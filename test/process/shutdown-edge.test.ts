/**
 * A request that reaches a server after it began shutting down (on a connection that was already open) is refused in
 * the one error shape, 503 service_unavailable with Retry-After and Connection: close, rather than Fastify's own 503
 * body; the process still exits cleanly.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { killLeftovers, type ServerProcess, sleep, startServer } from '../support/process.ts';
import { RawClient } from '../support/raw-http.ts';

let db: TestDatabase;
let server: ServerProcess;
beforeAll(async () => {
  db = await createTestDatabase('shutdown_edge');
  server = await startServer({ DATABASE_URL: db.url, LOG_LEVEL: 'warn' });
  await server.waitReady();
});
afterAll(async () => {
  await killLeftovers();
  await db?.drop();
});

/** Resolves once the server refuses new connections: its listener is closed, so shutdown is under way. */
async function untilRefusing(port: number, timeoutMs = 10_000) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(10)) {
    const refused = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(false);
      });
      s.once('error', () => resolve(true));
    });
    if (refused) return;
  }
  throw new Error('the server kept accepting connections after SIGTERM');
}

describe('shutdown', { timeout: 180_000 }, () => {
  it('answers a request arriving during the drain with 503 service_unavailable and exits 0', async () => {
    const client = await RawClient.connect(server.origin);
    try {
      // A request under way (its head not yet complete) keeps the connection out of the idle sweep.
      client.write('GET /api/v1/contacts/search?email=a@example.com HTTP/1.1\r\nhost: localhost\r\n');
      server.child.kill('SIGTERM');
      await untilRefusing(server.port);
      client.write('\r\n');
      const res = await client.response();
      expect(res?.status, client.received).toBe(503);
      expect(res!.headers['content-type']).toMatch(/^application\/json/);
      expect(res!.json).toEqual({
        error: expect.stringMatching(/shutting down/),
        code: 'service_unavailable',
        requestId: res!.headers['x-request-id'],
      });
      expect(res!.headers['retry-after']).toBe('1');
      expect(res!.headers.connection).toBe('close');
    } finally {
      client.close();
    }
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});
