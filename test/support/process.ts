/**
 * Real processes for the process tests: the server entry point and the operator CLIs, run with the same Node binary
 * as the test runner, plus what those tests need to look at around them (the embedded cluster of a DATA_DIR, ports).
 * Everything spawned here is tracked so that `killLeftovers()` can end it if a test fails halfway.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { flushCompileCache } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigSchema } from '#core/config.ts';
import { startEmbeddedPostgres } from '#db/embedded.ts';
import { isRunning, parentOf, signal } from './procfs.ts';
import { fromPristine } from './pristine-cluster.ts';
import { scratchDir } from './scratch.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MAIN = path.join(ROOT, 'apps/server/src/main.ts');
export const ADMIN = path.join(ROOT, 'apps/server/src/admin.ts');
export const MIGRATE = path.join(ROOT, 'apps/server/src/migrate.ts');

/** Where openDatabase() keeps the embedded cluster of a DATA_DIR. */
export const clusterDir = (dataDir: string): string => path.join(path.resolve(dataDir), 'postgres');

const CONFIG_KEYS = Object.keys(ConfigSchema.in.shape);

/** The runner's environment without any setting the app reads (a developer's DATABASE_URL must not leak in), plus `env`. */
export function cleanEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !CONFIG_KEYS.includes(k)));
  return { ...base, ...env };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Ran extends Exit {
  stdout: string;
  stderr: string;
  ms: number;
}

const live = new Set<ChildProcess>();

function track(child: ChildProcess): Promise<Exit> {
  live.add(child);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
}

/** Runs a script to completion; a run past `timeoutMs` is killed and reported. */
export async function run(script: string, args: readonly string[], env: Record<string, string>, timeoutMs = 120_000): Promise<Ran> {
  const started = performance.now();
  // What this worker compiled goes to Node's compile cache (vitest.config.ts) before the child looks there: written
  // otherwise only when the worker exits, at the run's end, so every child meanwhile compiled the same modules again.
  flushCompileCache();
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = track(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exit = await exited;
  clearTimeout(timer);
  if (exit.signal === 'SIGKILL') throw new Error(`${path.basename(script)} ${args[0] ?? ''} timed out after ${timeoutMs} ms\n${stderr}`);
  return { ...exit, stdout, stderr, ms: Math.round(performance.now() - started) };
}

/** The operator CLI, run the way `npm run --silent admin -- ...` runs it. */
export const admin = (args: readonly string[], env: Record<string, string>): Promise<Ran> => run(ADMIN, args, env);

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly origin: string;
  /** Everything the process printed so far. */
  readonly stdout: string;
  readonly stderr: string;
  readonly exited: Promise<Exit>;
  /** Resolves with the time from spawn to the first 200 from /readyz; rejects if the process dies first. */
  waitReady(timeoutMs?: number): Promise<number>;
  /** Resolves once stdout or stderr matches; rejects if the process dies first. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * Starts `node apps/server/src/main.ts` listening on 127.0.0.1 and a free port (unless PORT is given). `group: true`
 * makes it the leader of a process group of its own, as a shell makes a foreground command, so that a test can signal
 * the whole group (`process.kill(-child.pid, 'SIGINT')`) the way a terminal's Ctrl-C or a service manager does.
 */
export async function startServer(env: Record<string, string>, opts: { group?: boolean } = {}): Promise<ServerProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const started = performance.now();
  flushCompileCache(); // as run() does
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: cleanEnv({ HOST: '127.0.0.1', ...env, PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.group === true,
  });
  const exited = track(child);
  let stdout = '';
  let stderr = '';
  let exit: Exit | undefined;
  void exited.then((e) => (exit = e));
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const origin = `http://127.0.0.1:${port}`;
  const died = () =>
    new Error(`server exited (${exit?.code ?? exit?.signal}) before it was ready\nstderr:\n${stderr}\nstdout:\n${stdout.slice(-3000)}`);

  const poll = async (what: string, timeoutMs: number, check: () => Promise<boolean>) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (exit) throw died();
      if (await check()) return;
      await sleep(20);
    }
    throw new Error(`server not ${what} after ${timeoutMs} ms\nstderr:\n${stderr}\nstdout:\n${stdout.slice(-3000)}`);
  };

  return {
    child,
    port,
    origin,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    waitReady: async (timeoutMs = 120_000) => {
      await poll('ready', timeoutMs, async () => {
        const res = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
        return res?.status === 200;
      });
      return Math.round(performance.now() - started);
    },
    waitForOutput: (pattern, timeoutMs = 120_000) =>
      poll(`printing ${pattern}`, timeoutMs, async () => pattern.test(stdout) || pattern.test(stderr)),
    stop: async (signal = 'SIGTERM') => {
      if (!exit) child.kill(signal);
      return exited;
    },
  };
}

/** The JSON log lines a process printed (pino), ignoring anything else. */
export function logLines(output: string): Record<string, unknown>[] {
  return output.split('\n').flatMap((line) => {
    try {
      const parsed: unknown = JSON.parse(line);
      return isRecord(parsed) ? [parsed] : [];
    } catch {
      return [];
    }
  });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** fetch() against the public API of a spawned server; JSON in, JSON out. */
export async function api(
  origin: string,
  method: string,
  apiPath: string,
  opts: { key?: string; body?: unknown } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${origin}/api/v1${apiPath}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/**
 * A fresh scratch folder (scratch.ts) with DATA_DIR inside; with `initialised`, its cluster is a copy of the run's
 * pristine one (pristine-cluster.ts), for a file whose subject is not the first start's `initdb`.
 */
export async function freshDataDir(
  label: string,
  opts: { initialised?: boolean } = {},
): Promise<{ dataDir: string; remove(): Promise<void> }> {
  const root = await scratchDir(label);
  const dataDir = path.join(root, 'data');
  if (opts.initialised) await fromPristine(clusterDir(dataDir));
  return {
    dataDir,
    remove: async () => {
      await stopLeftoverCluster(dataDir);
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * Pids of the postmaster running on this DATA_DIR's cluster. Its children carry rewritten titles and die with it, but
 * one just forked still has the postmaster's command line until it first runs (seen once: a backend forked as a server
 * became ready, on a busy machine), so a process whose parent is among the matches is one of those children.
 */
export async function clusterPids(dataDir: string): Promise<number[]> {
  const dir = clusterDir(dataDir);
  const found = new Map<number, number>();
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const args = (await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (path.basename(args[0] ?? '') !== 'postgres' || !args.includes(dir)) continue;
    found.set(Number(entry), parentOf(Number(entry)) ?? 0);
  }
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid);
}

/**
 * Starts the cluster of a stopped DATA_DIR on its own and returns what PostgreSQL said while starting: a clean shutdown
 * before shows as "database system was shut down at", a crash as "not properly shut down; automatic recovery".
 */
export async function clusterStartupLog(dataDir: string): Promise<string[]> {
  const lines: string[] = [];
  const cluster = await startEmbeddedPostgres({ dataDir: clusterDir(dataDir), onLog: (l) => lines.push(l) });
  await cluster.stop();
  return lines;
}

/**
 * Ends a cluster a killed or failed test left running on this DATA_DIR: by its pid, never by name. A fast shutdown
 * first; one that has not ended after `graceMs` (a cluster stopped or wedged) is killed, so the folder can go.
 */
export async function stopLeftoverCluster(dataDir: string, graceMs = 5_000): Promise<void> {
  const lockFile = path.join(clusterDir(dataDir), 'postmaster.pid');
  for (const pid of await clusterPids(dataDir)) {
    signal(pid, 'SIGINT');
    for (const until = performance.now() + graceMs; performance.now() < until && existsSync(lockFile) && isRunning(pid); ) await sleep(20);
    if (!isRunning(pid)) continue;
    signal(pid, 'SIGKILL');
    while (isRunning(pid)) await sleep(20);
  }
}

/** SIGKILLs every child still running; for afterAll, after the tests had their chance to stop them properly. */
export async function killLeftovers(): Promise<void> {
  await Promise.all(
    [...live].map((child) => {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      return gone;
    }),
  );
}

/** The lowest port the kernel hands out to outgoing connections (Linux's ip_local_port_range; 32768 elsewhere). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // not Linux: the IANA range's start
  }
  return 32_768;
}

const PORTS_FROM = 10_000;
/** Each vitest worker draws from its own slice, so two workers never probe the same port at once. */
const SLICES = 8;

/** Whether 127.0.0.1:`port` can be bound now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port free now for a server the test starts on it, below the kernel's ephemeral range. A port from that range (what
 * binding port 0 gives) may be handed to any outgoing connection between the probe and the bind, or while a server is
 * down and about to start again on its port: in a full run a PostgreSQL restarted on its port failed with "Address
 * already in use" because a client connection had been given it.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const slice = Math.floor((high - PORTS_FROM) / SLICES);
  if (slice < 100) throw new Error(`the ephemeral port range starts at ${high}: no room below it for test servers`);
  const from = PORTS_FROM + (Number(process.env.VITEST_POOL_ID ?? 0) % SLICES) * slice;
  for (let i = 0; i < 100; i++) {
    const port = from + Math.floor(Math.random() * slice);
    if (await canBind(port)) return port;
  }
  throw new Error(`no free port in ${from}-${from + slice - 1}`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One request to a server process's `/api` with a bearer key: the status, the body (JSON when it parses, else the text,
 * for an assertion to show) and the key's remaining budget.
 */
export async function sendWithKey(origin: string, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${origin}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: res.status, body: parsed, remaining: res.headers.get('x-ratelimit-remaining') };
}
