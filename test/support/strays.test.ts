import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import { expect, it } from 'vitest';
import { startEmbeddedPostgres } from '#db/embedded.ts';
import { clusterDir, stopLeftoverCluster } from './process.ts';
import { childrenOf, isRunning } from './procfs.ts';
import { scratchDir } from './scratch.ts';
import { findStrays, killStrays, lastingStrays, RUN_TAG } from './strays.ts';
import { fromPristine } from './pristine-cluster.ts';

/**
 * A `sleep` whose parent has exited, as a cluster is once the worker that started it died: a shell starts it in the
 * background and exits, so it is handed to init, outside this process's tree.
 */
async function orphanSleep(run: string): Promise<number> {
  const shell = spawn('sh', ['-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], {
    env: { ...process.env, [RUN_TAG]: run },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  shell.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => shell.once('close', resolve));
  return Number(out.trim());
}

it("finds and kills a run's process left outside the test process's tree, not its own children or another run's", async () => {
  const run = randomUUID();
  const orphan = await orphanSleep(run);
  const otherRun = await orphanSleep(randomUUID());
  const child = spawn('sleep', ['30'], { env: { ...process.env, [RUN_TAG]: run }, stdio: 'ignore' });
  try {
    const strays = await findStrays(run);
    expect(strays).toEqual([{ pid: orphan, command: 'sleep 30' }]);
    killStrays(strays);
    // Killed, it is no longer listed (a zombie until init reaps it has no command line).
    await expect.poll(() => findStrays(run), { interval: 20 }).toEqual([]);
  } finally {
    child.kill('SIGKILL');
    killStrays([{ pid: otherRun, command: '' }]);
  }
});

it('waits out the grace for a stray that is still ending, and answers with one that outlasts it', async () => {
  const run = randomUUID();
  const pid = await orphanSleep(run);
  try {
    expect(await lastingStrays(run, 100)).toEqual([{ pid, command: 'sleep 30' }]);
    const lasting = lastingStrays(run, 60_000);
    // It ends while the grace runs (the ending a test set off before the run's end, late).
    killStrays([{ pid, command: 'sleep 30' }]);
    expect(await lasting).toEqual([]);
  } finally {
    killStrays([{ pid, command: '' }]);
  }
});

it('ends a cluster left on a DATA_DIR even when it answers no shutdown signal (stopLeftoverCluster)', async () => {
  const dataDir = await scratchDir('stray-cluster');
  try {
    const cluster = await startEmbeddedPostgres({ dataDir: await fromPristine(clusterDir(dataDir)) });
    const exited = new Promise<void>((resolve) => cluster.onUnexpectedExit(() => resolve()));
    const children = childrenOf(cluster.pid);
    // Stopped, it holds SIGINT until it runs again, which it never does here.
    process.kill(cluster.pid, 'SIGSTOP');
    await stopLeftoverCluster(dataDir, 100);
    // Ended, by the kill that followed the unanswered SIGINT (the test's time-out ends a failing wait).
    await exited;
    // A killed server leaves its shared memory behind (a segment in /dev/shm); the next start on the folder clears it,
    // once the children have let go, and a clean stop leaves nothing.
    await expect.poll(() => children.some(isRunning), { interval: 20 }).toBe(false);
    await (await startEmbeddedPostgres({ dataDir: clusterDir(dataDir) })).stop();
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
