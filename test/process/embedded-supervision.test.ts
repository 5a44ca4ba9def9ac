/**
 * `npm start` owns its embedded PostgreSQL, so it also looks after it (issues 16 and 28): when the postmaster dies
 * (here a real kill -9), the server starts it again on the same port and its pools reconnect, so /readyz is ready again
 * without anyone restarting leadwire; when restarting is not allowed or keeps failing, it exits non-zero with a clear
 * log line, for a process manager to restart it. A SIGKILLed server leaves its cluster running (nothing is lost); the
 * next server takes it over, so a later death of that cluster is restarted too. And the cluster runs in a process group
 * of its own: Ctrl-C in a terminal and a service manager's SIGTERM, which reach a whole process group, stop the server,
 * which stops the cluster last.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterPids, freshDataDir, killLeftovers, logLines, type ServerProcess, startServer } from '../support/process.ts';

// One DATA_DIR for the file, its cluster initialised as a copy (a first start's initdb is lifecycle.test.ts's): the first
// server migrates it, the later ones start warm.
let home: Awaited<ReturnType<typeof freshDataDir>>;
let server: ServerProcess | undefined;

beforeAll(async () => {
  home = await freshDataDir('supervise', { initialised: true });
});

afterEach(async () => {
  await server?.stop('SIGTERM');
  server = undefined;
});
afterAll(async () => {
  await killLeftovers();
  await home?.remove();
});

async function serve(env: Record<string, string> = {}, opts: { group?: boolean } = {}) {
  server = await startServer({ DATA_DIR: home.dataDir, LOG_LEVEL: 'info', PASSWORD_HASH_COST: '12', ...env }, opts);
  await server.waitReady();
  const [postmaster, ...others] = await clusterPids(home.dataDir);
  expect(others).toEqual([]);
  return { s: server, postmaster: postmaster! };
}

const readyz = async (s: ServerProcess) => (await fetch(`${s.origin}/readyz`).catch(() => undefined))?.status;
const messages = (s: ServerProcess) => logLines(s.stdout).map((l) => l.msg);
const errorLines = (s: ServerProcess) => logLines(`${s.stdout}\n${s.stderr}`).filter((l) => Number(l.level) >= 50);

describe('the embedded PostgreSQL killed under a running server', () => {
  it('is restarted in place, also after the server itself was SIGKILLed and a new one took its cluster over', {
    timeout: 180_000,
  }, async () => {
    // The first crash: the server. Its cluster survives it, with every committed write.
    const first = await serve();
    first.s.child.kill('SIGKILL');
    expect(await first.s.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await clusterPids(home.dataDir)).toEqual([first.postmaster]);

    // The next server does not join a cluster nobody would restart: it stops it cleanly and starts its own.
    const second = await serve();
    expect(second.postmaster).not.toBe(first.postmaster);
    expect(logLines(second.s.stdout).find((l) => l.msg?.toString().includes('left running by a server that is gone'))).toMatchObject({
      level: 40,
      pid: first.postmaster,
    });

    // The second crash: that cluster. The server restarts it on the same port, and its pools reconnect.
    process.kill(second.postmaster, 'SIGKILL');
    await second.s.waitForOutput(/embedded PostgreSQL restarted/, 60_000);
    await second.s.waitReady(10_000);
    expect(await readyz(second.s)).toBe(200);
    const [restarted] = await clusterPids(home.dataDir);
    expect(restarted).toBeDefined();
    expect(restarted).not.toBe(second.postmaster);
    const lines = logLines(second.s.stdout);
    expect(lines.find((l) => l.msg === 'embedded PostgreSQL exited unexpectedly')).toMatchObject({
      level: 50,
      exit: { signal: 'SIGKILL' },
    });
    expect(lines.find((l) => l.msg === 'embedded PostgreSQL restarted')).toMatchObject({ level: 30, attempt: expect.any(Number) });
    // Still a clean shutdown afterwards: the restarted cluster is the one stopped.
    const exit = await second.s.stop('SIGTERM');
    server = undefined;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await clusterPids(home.dataDir)).toEqual([]);
  });

  it('makes the process exit non-zero with a clear log line when it may not be restarted', { timeout: 180_000 }, async () => {
    const { s, postmaster } = await serve({ DB_EMBEDDED_RESTART_ATTEMPTS: '0' });
    process.kill(postmaster, 'SIGKILL');
    const exit = await s.exited;
    server = undefined;
    expect(exit).toEqual({ code: 1, signal: null });
    expect(logLines(s.stdout).find((l) => l.msg === 'embedded PostgreSQL could not be restarted; exiting')).toMatchObject({ level: 60 });
  });
});

describe('a signal to the whole process group, as a terminal (Ctrl-C) and a service manager send it', () => {
  // Exit 0 is the proof of promptness: past SHUTDOWN_TIMEOUT_MS the server gives up, logs at level 50 and exits 1.
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s: HTTP drained, jobs stopped, then PostgreSQL; no error line; exit 0',
    {
      timeout: 180_000,
    },
    async (signal) => {
      const { s } = await serve({}, { group: true });
      process.kill(-s.child.pid!, signal);
      const exit = await s.exited;
      server = undefined;
      expect(exit, s.stdout.slice(-3000)).toEqual({ code: 0, signal: null });
      expect(errorLines(s)).toEqual([]);
      const said = messages(s);
      const order = ['shutting down', 'http closed; stopping workers and database', 'job queue stopped', 'stopped'];
      expect(said.filter((m) => order.includes(String(m)))).toEqual(order);
      expect(await clusterPids(home.dataDir)).toEqual([]);
    },
  );
});
