import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from './embedded.ts';
import { childrenOf, isRunning } from '../../../test/support/procfs.ts';
import { SCRATCH, scratchDir } from '../../../test/support/scratch.ts';

const isRoot = process.getuid?.() === 0;

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Runs a short-lived process (as `uid` when given) and returns its pid, alive or already exited. */
async function spawnSleep(opts: { uid?: number; gid?: number; exited?: boolean }): Promise<{ pid: number; kill(): void }> {
  const child = spawn('sleep', [opts.exited ? '0' : '30'], { uid: opts.uid, gid: opts.gid, stdio: 'ignore' });
  if (child.pid === undefined) throw new Error('spawn failed');
  if (opts.exited) await new Promise((resolve) => child.once('exit', resolve));
  return { pid: child.pid, kill: () => child.kill() };
}

describe('startEmbeddedPostgres', () => {
  let root: string;
  /**
   * One data dir for the file: the first start initialises it (initdb, the slow part), the later tests start it warm;
   * each leaves it stopped. A test run alone initialises it itself.
   */
  let dataDir: string;
  beforeAll(async () => {
    root = await scratchDir('embedded-test');
    dataDir = path.join(root, 'cluster', 'data');
  });
  afterAll(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('starts, keeps data across restarts and stops idempotently', async () => {
    const logs: string[] = [];

    const first = await startEmbeddedPostgres({ dataDir, onLog: (l) => logs.push(l) });
    try {
      expect(first.url).toBe(`postgres://leadwire:leadwire@127.0.0.1:${first.port}/leadwire`);
      expect(await query(first.url, 'select 1 as one')).toEqual([{ one: 1 }]);
      await query(first.url, `create table kept (v text); insert into kept values ('hello')`);
    } finally {
      await first.stop();
    }
    await first.stop();
    expect(logs.some((l) => l.includes('ready to accept connections'))).toBe(true);
    expect((await fs.stat(path.dirname(dataDir))).mode & 0o777).toBe(0o755);

    const second = await startEmbeddedPostgres({ dataDir });
    try {
      expect(await query(second.url, 'select v from kept')).toEqual([{ v: 'hello' }]);
    } finally {
      await second.stop();
    }
  });

  it('starts despite a postmaster.pid left by a killed run', async () => {
    const cluster = await startEmbeddedPostgres({ dataDir });
    await cluster.stop();
    const lockFile = path.join(dataDir, 'postmaster.pid');

    // A dead pid, then a live pid reused by a process of the `postgres` user, which
    // PostgreSQL on its own would take for a running server.
    const dead = await spawnSleep({ exited: true });
    const ids = isRoot
      ? {
          uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
          gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
        }
      : {};
    const reused = await spawnSleep(ids);
    try {
      for (const pid of [dead.pid, reused.pid]) {
        await fs.writeFile(lockFile, `${pid}\n${dataDir}\n`);
        const restarted = await startEmbeddedPostgres({ dataDir });
        try {
          expect(await query(restarted.url, 'select 1 as one')).toEqual([{ one: 1 }]);
        } finally {
          await restarted.stop();
        }
      }
    } finally {
      reused.kill();
    }
  });

  it('stop() ends a server that answers no shutdown signal, and the data dir starts again', async () => {
    const cluster = await startEmbeddedPostgres({ dataDir, stopGraceMs: 100 });
    await query(cluster.url, `create table if not exists survived (v int); insert into survived values (1)`);
    const children = childrenOf(cluster.pid);
    expect(children.length).toBeGreaterThan(0);
    // A stopped postmaster holds SIGINT and SIGQUIT until it runs again, which it never does here.
    process.kill(cluster.pid, 'SIGSTOP');
    await cluster.stop();
    expect(isRunning(cluster.pid)).toBe(false);
    // Its children notice it gone and exit on their own; a start must wait for them to let go of the shared memory.
    await expect.poll(() => children.some(isRunning), { interval: 20 }).toBe(false);
    const restarted = await startEmbeddedPostgres({ dataDir });
    try {
      expect(await query(restarted.url, 'select count(*)::int as n from survived')).toEqual([{ n: 1 }]);
    } finally {
      await restarted.stop();
    }
  });

  it('refuses clearly to start a second server on a data dir in use', async () => {
    const cluster = await startEmbeddedPostgres({ dataDir });
    try {
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(/already running on .*cluster\/data/);
      expect(await query(cluster.url, 'select 1 as one')).toEqual([{ one: 1 }]);
    } finally {
      await cluster.stop();
    }
  });

  // Only root hands the server over to the `postgres` user; otherwise it runs as us.
  it.runIf(isRoot)('names the folder the postgres user cannot traverse', async () => {
    const closed = await fs.mkdtemp(path.join(SCRATCH, 'leadwire-closed-'));
    try {
      expect((await fs.stat(closed)).mode & 0o777).toBe(0o700);
      await expect(startEmbeddedPostgres({ dataDir: path.join(closed, 'pg', 'data') })).rejects.toThrow(
        `the folder ${closed} is not traversable`,
      );
    } finally {
      await fs.rm(closed, { recursive: true, force: true });
    }
  });
});
