/**
 * One PostgreSQL cluster initialised per test run and copied into the data dir of each cluster a test starts for itself
 * (an outage, a stall, a restart, a standby's primary, a stray): `initdb` costs 0.65-0.85 s of CPU, a copy of its 47 MB
 * (`cp -a`, owners and modes kept: run as root, the files belong to the `postgres` OS user) 0.1-0.15 s with the start
 * (issue 26). The global setup makes it and names it in the environment, which the workers and everything they start
 * inherit. The embedded module's own tests (packages/db/src/embedded.test.ts) and the server's first start on a fresh
 * DATA_DIR still run `initdb`: that is what they are about.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedPostgres } from '../../packages/db/src/embedded.ts';

const execFileAsync = promisify(execFile);

/** Where the run's pristine cluster is; unset outside a test run (a benchmark using the same helpers). */
export const PRISTINE_ENV = 'LEADWIRE_TEST_PRISTINE_CLUSTER';

/** Initialises a cluster in `dataDir` (initdb, then a start that creates its database, and a clean stop). */
export async function makePristineCluster(dataDir: string): Promise<void> {
  await (await startEmbeddedPostgres({ dataDir })).stop();
}

/**
 * `dataDir` filled with a copy of the run's pristine cluster, unless it already holds one (a test's second start) or
 * no run named one: startEmbeddedPostgres then initialises it as before. Returns `dataDir`.
 */
export async function fromPristine(dataDir: string): Promise<string> {
  const pristine = process.env[PRISTINE_ENV];
  if (!pristine || existsSync(dataDir)) return dataDir;
  await fs.mkdir(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  await execFileAsync('cp', ['-a', pristine, dataDir]);
  return dataDir;
}
