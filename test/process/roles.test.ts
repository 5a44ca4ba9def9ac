/**
 * ROLE splits the work across processes sharing one PostgreSQL (DATABASE_URL): `api` serves HTTP, `worker` runs the job
 * workers and never opens the HTTP port.
 */
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { adminHere } from '../support/admin.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { api, freePort, killLeftovers, logLines, type ServerProcess, startServer } from '../support/process.ts';

const dbs: TestDatabase[] = [];
afterAll(async () => {
  await killLeftovers();
  await Promise.all(dbs.map((d) => d.drop()));
});

/** `migrated`: cloned from the run's migrated template; otherwise empty, for the processes to migrate at start. */
async function database(migrated: boolean): Promise<string> {
  const db = await createTestDatabase('roles', { migrated });
  dbs.push(db);
  return db.url;
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function startWorker(url: string): Promise<ServerProcess> {
  const worker = await startServer({ DATABASE_URL: url, ROLE: 'worker' });
  await worker.waitForOutput(/"msg":"leadwire ready"/);
  return worker;
}

describe('ROLE=api and ROLE=worker on one DATABASE_URL', { timeout: 180_000 }, () => {
  it('the api process serves HTTP; the worker process runs without listening on PORT', async () => {
    const url = await database(true);
    const apiProcess = await startServer({ DATABASE_URL: url, ROLE: 'api' });
    // /readyz answers as soon as the server listens; the line saying so may reach the pipe a moment later.
    await Promise.all([apiProcess.waitReady(), apiProcess.waitForOutput(/"msg":"leadwire ready"/)]);
    const worker = await startWorker(url);

    const ready = logLines(worker.stdout).find((l) => l.msg === 'leadwire ready');
    expect(ready).toMatchObject({ role: 'worker' });
    expect(await listening(worker.port)).toBe(false);
    expect(await listening(apiProcess.port)).toBe(true);
    expect(logLines(apiProcess.stdout).find((l) => l.msg === 'leadwire ready')).toMatchObject({ role: 'api', port: apiProcess.port });

    const boot = await adminHere(
      ['bootstrap', '--org', 'Roles', '--email', `roles-${Date.now()}@example.com`, '--password', 'roles test password'],
      { DATABASE_URL: url },
    );
    expect(boot.code).toBe(0);
    const { publicKey } = JSON.parse(boot.stdout);
    expect(await api(apiProcess.origin, 'GET', '/contacts/search?email=nobody@example.com', { key: publicKey })).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });

    // Both still up after the request (the worker did not die for lack of a port), and both stop cleanly.
    expect(worker.child.exitCode).toBeNull();
    expect(await Promise.all([apiProcess.stop(), worker.stop()])).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });

  it('both start at the same time on a fresh database (a deployment rolls them out together)', async () => {
    const url = await database(false);
    const port = await freePort();
    const [apiProcess, worker] = await Promise.all([
      startServer({ DATABASE_URL: url, ROLE: 'api', PORT: String(port) }),
      startServer({ DATABASE_URL: url, ROLE: 'worker' }),
    ]);
    await Promise.all([apiProcess.waitReady(), worker.waitForOutput(/"msg":"leadwire ready"/)]);
    expect(await listening(worker.port)).toBe(false);
    expect(await Promise.all([apiProcess.stop(), worker.stop()])).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
