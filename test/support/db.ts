import { randomBytes } from 'node:crypto';
import { DatabaseUnavailableError } from '#db/bounded.ts';
import pg from 'pg';
import { inject, onTestFinished, type RunnerTask, type RunnerTestFile, TestRunner } from 'vitest';
import { databaseUrl, shownUrl } from './pg-admin.ts';

export interface TestDatabase {
  url: string;
  name: string;
  /**
   * Drops the database (closing any connection still open on it), unless a test of this file failed: then the
   * database is kept for inspection and its name and URL are printed. Called inside a test, the decision waits for
   * that test's outcome. Safe to call twice.
   */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /**
   * A clone of the run's template, already migrated (see global-setup.ts): what almost every test wants, and much
   * cheaper than migrating. Off: an empty database, for tests of the migrations themselves.
   */
  migrated?: boolean;
}

let adminPool: pg.Pool | undefined;

/**
 * The worker's admin sessions, for the CREATE and DROP DATABASE of every file: a new session costs PostgreSQL about
 * 4 ms of CPU and the client 1 (trusted; 5 and 3 with SCRAM), twice per file without them. An idle pool never keeps
 * the worker alive, and a session the server ends while idle is dropped from it (the pool's error event) rather than
 * failing the worker.
 */
function admin(): pg.Pool {
  if (!adminPool) {
    adminPool = new pg.Pool({ connectionString: inject('pgAdminUrl'), max: 2, idleTimeoutMillis: 5_000, allowExitOnIdle: true });
    adminPool.on('error', () => {});
  }
  return adminPool;
}

/**
 * Creates a database on the run's server (see global-setup.ts). Names are always made unique, because test files run
 * in parallel and, against a shared DATABASE_URL, runs may overlap or leave databases behind: `name` only labels it
 * (`t_<run>_<name>_<random>`) so a kept database can be traced back to its test.
 */
export async function createTestDatabase(name?: string, opts: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const label = (name ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .slice(0, 32);
  const dbName = `${inject('pgRunPrefix')}${label ? `${label}_` : ''}${randomBytes(6).toString('hex')}`;

  const id = (name: string) => pg.escapeIdentifier(name);
  // FILE_COPY copies the template's files whole, its relation cache file among them, where the default (WAL_LOG) writes
  // every block through the WAL and leaves the new database's first sessions to rebuild that cache. Measured, a clone,
  // eight sessions and a drop: 64-72 ms of the cluster's CPU against 82-86 ms, and not more with another database
  // written between clones (FILE_COPY checkpoints first).
  const template = opts.migrated ? ` template ${id(inject('pgTemplate'))} strategy file_copy` : '';
  await admin().query(`create database ${id(dbName)}${template}`);

  const url = databaseUrl(adminUrl, dbName);
  const decide = async (test?: RunnerTask): Promise<void> => {
    if ((test && hasFailure(test)) || (currentFile && hasFailure(currentFile))) {
      console.error(`A test failed: database ${dbName} is kept for inspection: ${shownUrl(url)}`);
      return;
    }
    // Without FORCE first: PostgreSQL then waits up to 5 s for sessions still closing to leave. pg's pool.end()
    // resolves before its sessions have closed, and a forced drop right after ends them with an error that nothing
    // listens for any more (an uncaught exception in the worker). Sessions a test left open are ended after that wait.
    // That wait looks again only every 100 ms, and most files' drops met a session still closing: this waits for them
    // first, looking every few milliseconds.
    await sessionsGone(dbName, CLOSING_MS);
    await admin()
      .query(`drop database if exists ${id(dbName)}`)
      .catch(async (err: { code?: string }) => {
        if (err.code !== '55006') throw err;
        await admin().query(`drop database if exists ${id(dbName)} with (force)`);
      });
  };
  let dropping: Promise<void> | undefined;
  return {
    url,
    name: dbName,
    drop: () => {
      if (dropping) return dropping;
      const test = TestRunner.getCurrentTest();
      if (!test) return (dropping = decide());
      onTestFinished(({ task }) => decide(task));
      return (dropping = Promise.resolve());
    },
  };
}

/**
 * Sessions a pool has ended leave within milliseconds; any still there after this (a slow host, or one a test left
 * open) are left to the drop's own wait.
 */
const CLOSING_MS = 200;

/** Resolves once `dbName` has no session, or after `withinMs` (then the drop's own wait, and FORCE, take over). */
async function sessionsGone(dbName: string, withinMs: number): Promise<void> {
  const until = performance.now() + withinMs;
  while ((await admin().query('select 1 from pg_stat_activity where datname = $1', [dbName])).rowCount! > 0) {
    if (performance.now() >= until) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let currentFile: RunnerTestFile | undefined;

/** Called before each test file by the setup file (file-outcome.ts), so that `drop()` can see the file's outcome. */
export function trackTestFile(file: RunnerTestFile): void {
  currentFile = file;
}

/** True when the task or anything in it failed: a test, a hook, a suite's beforeAll or afterAll. */
export function hasFailure(task: RunnerTask): boolean {
  if (task.result?.state === 'fail' || task.result?.errors?.length) return true;
  return 'tasks' in task && task.tasks.some(hasFailure);
}

/**
 * `work` on a connection a pool may have to set up first, tried again when that set-up outlasts the pool's wait for a
 * connection (the stall tests' 300 ms, on a loaded host): for a test's set-up, not for what the test is about.
 */
export async function settingUp<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof DatabaseUnavailableError) || attempt === 10) throw err;
    }
  }
}
