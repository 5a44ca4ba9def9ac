/**
 * `npm start` as an operator runs it: no DATABASE_URL, so the embedded PostgreSQL under DATA_DIR. One DATA_DIR goes
 * through the whole life of an installation, in order: cold start, the admin CLI beside the running server, a graceful
 * shutdown during a request, the admin CLI with the server down, a warm restart that finds everything again.
 */
import pg from 'pg';
import { runningClusterUrl } from '#db/embedded.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  api,
  clusterDir,
  clusterPids,
  clusterStartupLog,
  freshDataDir,
  killLeftovers,
  logLines,
  type ServerProcess,
  sleep,
  startServer,
  stopLeftoverCluster,
} from '../support/process.ts';

const PASSWORDS = ['lifecycle owner password 1', 'lifecycle owner password 2'];
/** Every key value and password this file handles; none may ever appear in a server's output. */
const secrets: string[] = [...PASSWORDS];
/** Every server process of this file, for their output. */
const servers: ServerProcess[] = [];

let home: Awaited<ReturnType<typeof freshDataDir>>;
let env: Record<string, string>;
let server: ServerProcess | undefined;
const state: { publicKey?: string; contactId?: string; offline?: { publicKey: string; key: string } } = {};

async function start(): Promise<number> {
  server = await startServer(env);
  servers.push(server);
  return server.waitReady();
}

async function stop() {
  if (!server) throw new Error('no server');
  const exit = await server.stop('SIGTERM');
  server = undefined;
  return exit;
}

/** The last log lines of a server without the per-request noise, for failure messages. */
function tail(s: ServerProcess): string {
  const lines = `${s.stdout}${s.stderr}`.split('\n').filter((l) => !l.includes('"msg":"request"'));
  return lines
    .slice(-15)
    .map((l) => l.slice(0, 400))
    .join('\n');
}

function readyMs(output: string): unknown {
  return logLines(output).find((l) => l.msg === 'leadwire ready')?.ms;
}

function oneJsonLine(stdout: string): any {
  expect(stdout.endsWith('\n')).toBe(true);
  expect(stdout.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(stdout);
}

beforeAll(async () => {
  home = await freshDataDir('lifecycle');
  // trace: the most verbose level is where a secret would slip into a log line.
  env = { DATA_DIR: home.dataDir, LOG_LEVEL: 'trace' };
});
afterAll(async () => {
  await killLeftovers();
  await home?.remove();
});

describe('the server on an embedded database', { timeout: 180_000 }, () => {
  it('starts cold on a fresh DATA_DIR without DATABASE_URL; /healthz and /readyz answer 200', async () => {
    const ms = await start();
    console.log(`cold start (fresh DATA_DIR, spawn to /readyz 200): ${ms} ms; server's own count: ${String(readyMs(server!.stdout))} ms`);
    const health = await fetch(`${server!.origin}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`${server!.origin}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    expect(await clusterPids(home.dataDir)).toHaveLength(1);
  });

  it('admin CLI bootstraps and creates keys while the server runs, joining its cluster', async () => {
    const [postmaster] = await clusterPids(home.dataDir);
    const boot = await admin(['bootstrap', '--org', 'Running Co', '--email', 'owner@running.example', '--password', PASSWORDS[0]!], env);
    expect(boot.stderr).toBe('');
    expect(boot.code).toBe(0);
    const out = oneJsonLine(boot.stdout);
    expect(out).toEqual({
      orgId: expect.any(String),
      userId: expect.any(String),
      publicKey: expect.stringMatching(/^ck_live_/),
      internalKey: expect.stringMatching(/^ck_live_/),
    });
    secrets.push(out.publicKey, out.internalKey);
    state.publicKey = out.publicKey;

    const created = await admin(
      ['create-key', '--org', out.orgId, '--user', out.userId, '--type', 'public', '--permissions', 'contacts:read', '--name', 'Reader'],
      env,
    );
    expect(created.code).toBe(0);
    const reader = oneJsonLine(created.stdout);
    expect(reader).toEqual({
      id: expect.any(String),
      name: 'Reader',
      type: 'public',
      permissions: ['contacts:read'],
      key: expect.stringMatching(/^ck_live_/),
    });
    secrets.push(reader.key);

    // The CLI used the server's cluster and left it running.
    expect(await clusterPids(home.dataDir)).toEqual([postmaster]);
    expect((await fetch(`${server!.origin}/readyz`)).status).toBe(200);

    // 404 not_found rather than 401: the keys authenticate.
    expect(await api(server!.origin, 'GET', '/contacts/search?email=nobody@nowhere.example', { key: out.publicKey })).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect(await api(server!.origin, 'GET', '/contacts/search?email=nobody@nowhere.example', { key: reader.key })).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect(await api(server!.origin, 'POST', '/contacts/upsert', { key: reader.key, body: { email: 'x@y.example' } })).toMatchObject({
      status: 403,
      body: { code: 'insufficient_scope' },
    });
    expect(await api(server!.origin, 'GET', '/contacts/search?email=nobody@nowhere.example', { key: out.internalKey })).toMatchObject({
      status: 403,
      body: { code: 'wrong_api_surface' },
    });

    const upsert = await api(server!.origin, 'POST', '/contacts/upsert', {
      key: out.publicKey,
      body: { email: 'kept@running.example', firstName: 'Kept' },
    });
    expect(upsert).toMatchObject({ status: 200, body: { created: true } });
    state.contactId = upsert.body.id;
  });

  it('on SIGTERM lets an in-flight request finish, exits 0 and stops the embedded cluster cleanly', async () => {
    const stopping = server!;
    const url = await runningClusterUrl(clusterDir(home.dataDir));
    expect(url).toBeDefined();
    // The test holds a lock on contacts, so the batch below is in flight, inside the database, when SIGTERM arrives.
    const blocker = new pg.Client({ connectionString: url });
    // pg_stat_activity is a snapshot per transaction, so it is watched from outside the blocker's.
    const watcher = new pg.Client({ connectionString: url });
    for (const c of [blocker, watcher]) c.on('error', () => {});
    await Promise.all([blocker.connect(), watcher.connect()]);
    let exit: unknown;
    let leftover: number[] | undefined;
    try {
      await blocker.query('begin; lock table contacts in access exclusive mode');
      const contacts = Array.from({ length: 50 }, (_, i) => ({ email: `batch${i}@shutdown.example` }));
      const inFlight = api(stopping.origin, 'POST', '/contacts/batch-upsert', { key: state.publicKey!, body: { contacts } });
      inFlight.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
      for (const deadline = Date.now() + 20_000; ; await sleep(10)) {
        const { rows } = await watcher.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where wait_event = 'relation' and query ilike '%contacts%' and datname = current_database() and pid <> pg_backend_pid()`,
        );
        if (rows[0]!.n > 0) break;
        if (Date.now() > deadline) throw new Error('the batch never reached the database');
      }

      stopping.child.kill('SIGTERM');
      // The signal has been taken: from here on the process drains. That it waits for the request instead of exiting
      // (or dropping the database under it) is shown by the request answering 200 once the lock is released below.
      await stopping.waitForOutput(/"msg":"shutting down"/);
      expect(stopping.child.exitCode).toBeNull();
      expect(await clusterPids(home.dataDir)).toHaveLength(1);

      await blocker.query('commit');
      await blocker.end();
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ created: 50, failed: 0 });

      exit = await Promise.race([stop(), sleep(20_000).then(() => 'still running after 20 s')]);
      leftover = await clusterPids(home.dataDir);
    } finally {
      await Promise.all([blocker.end().catch(() => {}), watcher.end().catch(() => {})]);
      // Whatever happened, the later steps need the server and its cluster gone.
      if (stopping.child.exitCode === null && stopping.child.signalCode === null) await stopping.stop('SIGKILL');
      await stopLeftoverCluster(home.dataDir);
      server = undefined;
    }
    expect(exit, `exit after SIGTERM; the server said:\n${tail(stopping)}`).toEqual({ code: 0, signal: null });
    expect(leftover, 'postgres processes left on the DATA_DIR').toEqual([]);
    // PostgreSQL reports on its next start how the previous run ended.
    const startup = (await clusterStartupLog(home.dataDir)).join('\n');
    expect(startup).toContain('database system was shut down at');
    expect(startup).not.toMatch(/not properly shut down|automatic recovery|crash recovery/);
  });

  it('admin CLI bootstraps and creates keys while the server is down, and stops the cluster it started', async () => {
    expect(await clusterPids(home.dataDir)).toEqual([]);
    const boot = await admin(
      ['bootstrap', '--org', 'Offline Co', '--email', 'owner@offline.example', '--password', PASSWORDS[1]!, '--plan', 'max'],
      env,
    );
    expect(boot.stderr).toBe('');
    expect(boot.code).toBe(0);
    const out = oneJsonLine(boot.stdout);
    secrets.push(out.publicKey, out.internalKey);
    const created = await admin(
      ['create-key', '--org', out.orgId, '--user', out.userId, '--type', 'public', '--name', 'No permissions'],
      env,
    );
    expect(created.code).toBe(0);
    const key = oneJsonLine(created.stdout);
    expect(key).toMatchObject({ type: 'public', permissions: [], key: expect.stringMatching(/^ck_live_/) });
    secrets.push(key.key);
    state.offline = { publicKey: out.publicKey, key: key.key };
    console.log(`admin CLI with the server down (starts and stops the cluster): bootstrap ${boot.ms} ms, create-key ${created.ms} ms`);
    expect(await clusterPids(home.dataDir)).toEqual([]);
  });

  it('restarts warm on the same DATA_DIR and finds everything again', async () => {
    const ms = await start();
    console.log(
      `warm start (existing DATA_DIR, spawn to /readyz 200): ${ms} ms; server's own count: ${String(readyMs(server!.stdout))} ms`,
    );
    const { origin } = server!;

    const found = await api(origin, 'GET', '/contacts/search?email=kept@running.example', { key: state.publicKey! });
    expect(found).toMatchObject({ status: 200, body: { id: state.contactId, firstName: 'Kept' } });
    // The batch that was in flight at shutdown was committed.
    expect(await api(origin, 'GET', '/contacts/search?email=batch49@shutdown.example', { key: state.publicKey! })).toMatchObject({
      status: 200,
    });
    // Keys made by the CLI while the server was down work.
    expect(await api(origin, 'GET', '/contacts/search?email=kept@running.example', { key: state.offline!.publicKey })).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect(await api(origin, 'GET', '/contacts/search?email=kept@running.example', { key: state.offline!.key })).toMatchObject({
      status: 403,
      body: { code: 'insufficient_scope', required: 'contacts:read' },
    });
  });

  it('never prints a key or a password in its logs', async () => {
    const wrongKey = `ck_live_${'W'.repeat(43)}`;
    secrets.push(wrongKey);
    expect(await api(server!.origin, 'GET', '/contacts/search?email=a@b.example', { key: wrongKey })).toMatchObject({ status: 401 });
    expect(
      await api(server!.origin, 'POST', '/contacts/upsert', { key: state.publicKey!, body: { email: 'logs@secrets.example' } }),
    ).toMatchObject({ status: 200 });
    expect((await stop()).code).toBe(0);

    const all = servers.map((s) => `${s.stdout}\n${s.stderr}`).join('\n');
    // The logs are there (request lines at least), so their silence about secrets means something.
    expect(logLines(all).filter((l) => l.msg === 'request').length).toBeGreaterThan(5);
    for (const secret of secrets) expect(all.includes(secret), `a secret starting ${secret.slice(0, 12)} was logged`).toBe(false);
  });
});
