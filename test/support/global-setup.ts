/**
 * One PostgreSQL for the whole test run: DATABASE_URL when set (CI with a service
 * container, or a developer's own server), otherwise an embedded cluster in a
 * throwaway folder. On it, one database is migrated once and marked as a template;
 * test files clone it (see db.ts). A failed file keeps its database; the summary at
 * the end names them, and an embedded cluster's folder is then kept too.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { flushCompileCache } from 'node:module';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '@leadwire/core';
import { TestClock } from '#core/clock.ts';
import pino from 'pino';
import { compose } from '../../apps/server/src/compose.ts';
import { startEmbeddedPostgres } from '../../packages/db/src/embedded.ts';
import { databaseUrl, keptDatabases, shownUrl, withAdmin } from './pg-admin.ts';
import { fromPristine, makePristineCluster, PRISTINE_ENV } from './pristine-cluster.ts';
import { SCRATCH, scratchDir } from './scratch.ts';
import { killStrays, lastingStrays, RUN_TAG } from './strays.ts';
import { selectTiers } from './tiers.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL; only used to create and drop per-test databases. */
    pgAdminUrl: string;
    /** Prefix of every database this run creates: `t_<run>_`. */
    pgRunPrefix: string;
    /** The migrated template database that `createTestDatabase({ migrated: true })` clones. */
    pgTemplate: string;
    /**
     * The run's server as a login that authenticates with SCRAM, for the tests about the handshake itself (see
     * `scramLogin`; `databaseUrl()` points it at a test's database). Against DATABASE_URL, that URL's own login.
     */
    pgScramUrl: string;
  }
}

/** Marks a cluster folder kept after a failed run; such folders are removed after a week. */
const KEPT_MARKER = 'KEPT-BY-FAILED-TEST-RUN';
const KEPT_FOR_MS = 7 * 24 * 3_600_000;
const CLUSTER_LABEL = 'test-pg';
/** Not `test-pg-…`: never taken for a kept cluster of a failed run. */
const PRISTINE_LABEL = 'pristine-pg';
/** How long a process the run started may take to end after the run before it counts as left running (strays.ts). */
const STRAY_GRACE_MS = 5_000;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = randomBytes(3).toString('hex');
  // Inherited by every process the run starts, so that the teardown finds what a test failed to stop (strays.ts).
  process.env[RUN_TAG] = run;
  const external = process.env.DATABASE_URL;
  // One initialised cluster, copied for the run's own below and for every cluster a test starts (pristine-cluster.ts):
  // only process tests start clusters, so against DATABASE_URL a run without them initialises none.
  let removePristine = async (): Promise<void> => {};
  if (!external || selectTiers(process.env.LEADWIRE_TEST_TIERS).includes('processes')) {
    const pristineRoot = await scratchDir(PRISTINE_LABEL);
    removePristine = () => fs.rm(pristineRoot, { recursive: true, force: true });
    try {
      await makePristineCluster(path.join(pristineRoot, 'data'));
      process.env[PRISTINE_ENV] = path.join(pristineRoot, 'data');
    } catch (err) {
      await removePristine();
      // Against DATABASE_URL only the tests that start a cluster of their own need one; they then run initdb and fail
      // there, naming the cause, while the rest of the run goes on.
      if (!external) throw err;
      process.stderr.write(`No embedded PostgreSQL to copy for the tests that start their own: ${String(err)}\n`);
    }
  }
  let adminUrl: string;
  let scramUrl: string | undefined;
  let stopCluster = async (_keep: boolean): Promise<void> => {};

  if (external) {
    adminUrl = external;
  } else {
    await removeOldKeptClusters();
    const root = await scratchDir(CLUSTER_LABEL);
    // Kept to explain a failed start; the cluster's chatter never reaches the test output.
    const log: string[] = [];
    let cluster: Awaited<ReturnType<typeof startEmbeddedPostgres>>;
    try {
      // `<root>/postgres` is the layout of DATA_DIR, so `DATA_DIR=<root>` tools can open a kept cluster.
      cluster = await startEmbeddedPostgres({
        dataDir: await fromPristine(path.join(root, 'postgres')),
        // Three workers, each with an app of several pools, beside spawned servers and CLIs: on a slow host the pools
        // grow while requests wait, and past the default 100 connections tests failed with "too many clients already".
        settings: { max_connections: '400' },
        onLog: (line) => {
          log.push(line);
          if (log.length > 200) log.shift();
        },
      });
      // A throwaway cluster needs no durability: skipping the flushes saves I/O waits on every commit and clone.
      await withAdmin(cluster.url, async (c) => {
        for (const setting of ['fsync', 'synchronous_commit', 'full_page_writes']) await c.query(`alter system set ${setting} = off`);
        await c.query('select pg_reload_conf()');
      });
      scramUrl = await scramLogin(cluster.url, path.join(root, 'postgres'));
    } catch (err) {
      await fs.rm(root, { recursive: true, force: true });
      await removePristine();
      throw err;
    }
    adminUrl = cluster.url;
    stopCluster = async (keep) => {
      await cluster.stop();
      if (keep) await fs.writeFile(path.join(root, KEPT_MARKER), `${new Date().toISOString()}\n`);
      else await fs.rm(root, { recursive: true, force: true });
      if (keep) {
        process.stderr.write(
          `The test cluster is kept in ${root} (DATA_DIR layout; removed by a test run after a week).\n` +
            `  Inspect it: node_modules/.bin/node test/support/open-kept-cluster.ts ${root}\n`,
        );
      }
    };
  }

  const template = `tpl_${run}`;
  try {
    await createTemplate(adminUrl, template);
    // What this process compiled loading the composition (vitest.config.ts enables the cache), written now rather than
    // at the run's end: the workers load the same modules next.
    flushCompileCache();
  } catch (err) {
    await dropTemplate(adminUrl, template).catch(() => {});
    await stopCluster(false);
    await removePristine();
    throw err;
  }
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgRunPrefix', `t_${run}_`);
  project.provide('pgTemplate', template);
  project.provide('pgScramUrl', scramUrl ?? adminUrl);

  return async () => {
    await dropTemplate(adminUrl, template);
    const kept = await keptDatabases(adminUrl, `t_${run}_`);
    if (kept.length) {
      process.stderr.write(
        `\nDatabases of failed test files, kept for inspection:\n${kept.map((name) => `  ${shownUrl(databaseUrl(adminUrl, name))}\n`).join('')}` +
          (external ? `  Drop them when done: drop database <name>;\n` : ''),
      );
    }
    await stopCluster(kept.length > 0);
    await removePristine();
    const strays = await lastingStrays(run, STRAY_GRACE_MS);
    if (strays.length > 0) {
      killStrays(strays);
      throw new Error(
        `Processes started by this run's tests were still running at its end (killed now; the test that started ` +
          `each failed to stop it):\n${strays.map((s) => `  ${s.pid} ${s.command}`).join('\n')}`,
      );
    }
  };
}

/** The run's cluster login that keeps SCRAM (scramLogin). */
const SCRAM_LOGIN = 'leadwire_scram';

/**
 * Loopback sessions of the run's own cluster are trusted, except one login's: a SCRAM handshake costs the client about
 * 1.6 ms of CPU and the server 1 ms more than none (measured), and a run opens some 2,400 sessions. What the tests prove
 * does not depend on how a session authenticates, except the tests of the handshake's own cost (password hashing must
 * not delay it), which connect as SCRAM_LOGIN. Every cluster a test starts for itself, and `npm start`'s, keep SCRAM on
 * every session (embedded.ts).
 */
async function scramLogin(adminUrl: string, dataDir: string): Promise<string> {
  const hba = path.join(dataDir, 'pg_hba.conf');
  const rules = `host all ${SCRAM_LOGIN} 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n`;
  await fs.writeFile(hba, rules + (await fs.readFile(hba, 'utf8')));
  await withAdmin(adminUrl, async (c) => {
    await c.query(`create role ${SCRAM_LOGIN} login password '${SCRAM_LOGIN}'`);
    await c.query('select pg_reload_conf()');
  });
  const url = new URL(adminUrl);
  url.username = SCRAM_LOGIN;
  url.password = SCRAM_LOGIN;
  return url.toString();
}

/**
 * A database as the server leaves it after its first start, made once per run by the server's own composition: migrated
 * through the server's migrator, with the job queue installed (pg-boss's schema and our queues, some 1,300 catalog rows
 * that every test app's start otherwise wrote again: a fifth of PostgreSQL's CPU for a start). `allow_connections =
 * false` guarantees that no session sits on it, since CREATE DATABASE ... TEMPLATE refuses a source database with other
 * sessions.
 */
async function createTemplate(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, (c) => c.query(`create database ${c.escapeIdentifier(name)}`));
  const config = loadConfig({ DATABASE_URL: databaseUrl(adminUrl, name), LOG_LEVEL: 'silent', PORT: '0' });
  const runtime = await compose(config, pino({ level: 'silent' }), { clock: new TestClock() });
  await runtime.close();
  await withAdmin(adminUrl, async (c) => {
    await c.query(`alter database ${c.escapeIdentifier(name)} with is_template true allow_connections false`);
    // The migrator's sessions may still be closing; cloning needs them gone.
    await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
  });
}

async function dropTemplate(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, async (c) => {
    const exists = await c.query('select 1 from pg_database where datname = $1', [name]);
    if (!exists.rowCount) return;
    await c.query(`alter database ${c.escapeIdentifier(name)} with is_template false`);
    await c.query(`drop database ${c.escapeIdentifier(name)} with (force)`);
  });
}

/** Kept clusters of earlier failed runs, once they are a week old and no server runs on them. */
async function removeOldKeptClusters(): Promise<void> {
  // /tmp too: where clusters were kept before the scratch folder (scratch.ts), and where it is without a tmpfs.
  for (const parent of new Set([SCRATCH, '/tmp'])) {
    const entries = await fs.readdir(parent).catch(() => [] as string[]);
    for (const entry of entries.filter((e) => e.startsWith(`leadwire-${CLUSTER_LABEL}-`))) {
      const root = path.join(parent, entry);
      const marker = await fs.stat(path.join(root, KEPT_MARKER)).catch(() => null);
      if (!marker || Date.now() - marker.mtimeMs < KEPT_FOR_MS) continue;
      const running = await fs.stat(path.join(root, 'postgres', 'postmaster.pid')).catch(() => null);
      if (!running) await fs.rm(root, { recursive: true, force: true });
    }
  }
}
