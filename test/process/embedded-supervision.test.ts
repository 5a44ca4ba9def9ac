/**
 * `npm start` owns its embedded PostgreSQL, so it also looks after it (issue 16): when the postmaster dies (here a real
 * kill -9), the server starts it again on the same port and its pools reconnect, so /readyz is ready again without
 * anyone restarting leadwire; when restarting is not allowed or keeps failing, it exits non-zero with a clear log line,
 * for a process manager to restart it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterPids, freshDataDir, killLeftovers, logLines, type ServerProcess, startServer } from '../support/process.ts';

// One DATA_DIR for the file: the first server initialises it (the slow part), the second starts warm.
let home: Awaited<ReturnType<typeof freshDataDir>>;
let server: ServerProcess | undefined;

beforeAll(async () => {
  home = await freshDataDir('supervise');
});

afterEach(async () => {
  await server?.stop('SIGTERM');
  server = undefined;
});
afterAll(async () => {
  await killLeftovers();
  await home?.remove();
});

async function serve(env: Record<string, string> = {}): Promise<ServerProcess> {
  server = await startServer({ DATA_DIR: home.dataDir, LOG_LEVEL: 'info', PASSWORD_HASH_COST: '12', ...env });
  await server.waitReady();
  const [postmaster, ...others] = await clusterPids(home.dataDir);
  expect(others).toEqual([]);
  return Object.assign(server, { postmaster: postmaster!, dataDir: home.dataDir });
}

const readyz = async (s: ServerProcess) => (await fetch(`${s.origin}/readyz`).catch(() => undefined))?.status;

describe('the embedded PostgreSQL killed under a running server', () => {
  it('is restarted in place: /readyz is ready again, on a new postmaster', { timeout: 180_000 }, async () => {
    const s = await serve();
    const { postmaster, dataDir } = s as ServerProcess & { postmaster: number; dataDir: string };
    process.kill(postmaster, 'SIGKILL');
    await s.waitForOutput(/embedded PostgreSQL restarted/, 60_000);
    await s.waitReady(10_000);
    expect(await readyz(s)).toBe(200);
    const [restarted] = await clusterPids(dataDir);
    expect(restarted).toBeDefined();
    expect(restarted).not.toBe(postmaster);
    const lines = logLines(s.stdout);
    expect(lines.find((l) => l.msg === 'embedded PostgreSQL exited unexpectedly')).toMatchObject({
      level: 50,
      exit: { signal: 'SIGKILL' },
    });
    expect(lines.find((l) => l.msg === 'embedded PostgreSQL restarted')).toMatchObject({ level: 30, attempt: expect.any(Number) });
    // Still a clean shutdown afterwards: the restarted cluster is the one stopped.
    const exit = await s.stop('SIGTERM');
    server = undefined;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await clusterPids(dataDir)).toEqual([]);
  });

  it('makes the process exit non-zero with a clear log line when it may not be restarted', { timeout: 180_000 }, async () => {
    const s = await serve({ DB_EMBEDDED_RESTART_ATTEMPTS: '0' });
    const { postmaster } = s as ServerProcess & { postmaster: number };
    process.kill(postmaster, 'SIGKILL');
    const exit = await s.exited;
    server = undefined;
    expect(exit).toEqual({ code: 1, signal: null });
    expect(logLines(s.stdout).find((l) => l.msg === 'embedded PostgreSQL could not be restarted; exiting')).toMatchObject({ level: 60 });
  });
});
