import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runningCluster } from '../../packages/db/src/embedded.ts';
import { freePort } from '../support/process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const LOG_LINE_MAX = 400;

export interface BenchServer {
  origin: string;
  dataDir: string;
  pid: number;
  /** The environment the server was started with (secrets included: never print it whole). */
  env: Record<string, string | undefined>;
  /** SIGTERM, wait for a clean exit (the server stops its embedded cluster), then remove the data dir. */
  stop(): Promise<void>;
}

/** SIGTERM, and SIGKILL if the process has not exited within `timeoutMs`; resolves once it has exited. */
export async function stopChild(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

async function waitReady(origin: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`${origin}/readyz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not ready within ${READY_TIMEOUT_MS} ms`);
}

/**
 * The real server as its own process, the way it runs in production: `node apps/server/src/main.ts` on the embedded
 * PostgreSQL under a fresh data dir. The data dir is 0755 because, as root, PostgreSQL runs as `postgres` and must
 * traverse it (mkdtemp makes 0700).
 */
export async function startServer(extraEnv: Record<string, string> = {}, opts: StartOptions = {}): Promise<BenchServer> {
  // The free port is found before the server binds it, so another process on a busy machine may take it in between.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(extraEnv, opts);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof Error && err.message.includes('EADDRINUSE'))) throw err;
      process.stderr.write('port taken before the server bound it; trying another\n');
    }
  }
}

export interface StartOptions {
  /**
   * The server in a process group of its own: a terminal's Ctrl-C reaches the bench alone, which stops the server
   * cleanly, and whatever of the group outlives the server's exit is killed with it. (Its PostgreSQL runs in a group of
   * its own and is stopped by the server, or below if the server had to be killed.)
   */
  group?: boolean;
  /** Node flags for the server, after BENCH_SERVER_NODE_ARGS's. */
  nodeArgs?: string[];
  /** Sees each line the server prints first; returning true keeps it off the bench's stderr. */
  onLine?: (line: string) => boolean;
}

/** SIGKILL to every process left in the group led by `pid`; none left is fine. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already empty.
  }
}

async function startOnce(extraEnv: Record<string, string>, opts: StartOptions): Promise<BenchServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'leadwire-bench-'));
  await fs.chmod(dataDir, 0o755);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ROLE: process.env.BENCH_ROLE ?? 'all',
    ...extraEnv,
  };
  // The benchmark is about the embedded set-up and the plain request path: no external database (unless the phase
  // brings its own, as bench:replica's primary and standby), no AI adjuster.
  if (extraEnv.DATABASE_URL === undefined) delete env.DATABASE_URL;
  delete env.SCORE_ADJUSTER_URL;
  const extraArgs = [...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...(opts.nodeArgs ?? [])];
  const child = spawn(process.execPath, [...extraArgs, 'apps/server/src/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.group === true,
  });
  // Warnings and errors only (LOG_LEVEL=warn); forwarded so a failing run explains itself, cut short because pino
  // serialises whole error objects (a pg client is several kilobytes).
  let addressInUse = false;
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      if (opts.onLine?.(line)) continue;
      addressInUse ||= line.includes('EADDRINUSE');
      process.stderr.write(`[server] ${line.length > LOG_LINE_MAX ? `${line.slice(0, LOG_LINE_MAX)}...` : line}\n`);
    }
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await stopChild(child, STOP_TIMEOUT_MS);
      if (opts.group && child.pid) killGroup(child.pid);
      // A server that had to be SIGKILLed leaves its embedded PostgreSQL running (it is detached): its data goes next.
      const left = await runningCluster(path.join(dataDir, 'postgres'));
      if (left) process.kill(left.pid, 'SIGKILL');
      await fs.rm(dataDir, { recursive: true, force: true });
    })());

  try {
    await waitReady(origin, child);
  } catch (err) {
    await stop();
    throw addressInUse ? new Error(`EADDRINUSE on ${origin}`, { cause: err }) : err;
  }
  return { origin, dataDir, pid: child.pid ?? 0, env, stop };
}
