/**
 * `npm run bench:scale`: does a hot operation cost more once the database holds years of history?
 *
 * On a fresh embedded PostgreSQL (its own data dir, removed at the end), with every prepared statement on its generic
 * plan (`plan_cache_mode = force_generic_plan` for the database: what a long-running server settles on, planned for
 * an average organization), it measures the hot operations of one workspace through the real services (in this
 * process, as the server calls them: no HTTP, whose cost does not depend on the data):
 *   the single upsert, the batch upsert, a search by email, an events feed page, a timeline page, a tracking collect
 *   and a webhook dispatch round (events to deliveries);
 * for each, every statement it runs under EXPLAIN (ANALYZE, BUFFERS) (buffers, rows of growing tables touched, scans)
 * and the calls in a few loops for a few seconds (latency, CPU per call of this process and of PostgreSQL). First on
 * the empty database (the workspace with 1,000 contacts), then after seeding 1,000 workspaces with 1,000,000 contacts,
 * 10,000,000 outbox events and 10,000,000 page views (and a delivery log of 1,000,000 for the measured workspace's endpoint), the measured workspace holding a fifth of each (scaled by
 * `--scale`). Each seeded figure is printed beside the empty one with the ratio and the goal (at most 1.5x), met or
 * MISSED. It reports; it never fails on figures. Last line: `BENCH_SCALE_RESULT {json}`.
 *
 * Options: `--scale 0.1` (or BENCH_SCALE) for a quick run; BENCH_SECONDS (5) and BENCH_WARMUP_SECONDS (2) per operation.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { migrateUp, openDatabase, openDb, openOrm } from '@leadwire/db';
import pg from 'pg';
import { cpuMeter, machineBusyCores, postmasterPid } from './cpu.ts';
import { measureAll, openWorkspace } from './scale-measure.ts';
import { formatScale, scaleGoals } from './scale-report.ts';
import { seedScale, sizesAt } from './scale-seed.ts';

function option(flag: string, env: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  const raw = at >= 0 ? process.argv[at + 1] : process.env[env];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag} (${env}) must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

const S = {
  scale: option('--scale', 'BENCH_SCALE', 1),
  seconds: option('--seconds', 'BENCH_SECONDS', 5),
  warmupSeconds: option('--warmup', 'BENCH_WARMUP_SECONDS', 2),
};
const FIRST_CONTACTS = 1_000;
/** Rows of a growing table one call may touch: a batch, a dispatch round, a feed window are all below it. */
const ROWS_LIMIT = 2_000;

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const f0 = (n: number) => Math.round(n).toLocaleString('en-US');

async function main() {
  const busyBefore = await machineBusyCores(2000);
  if (busyBefore !== null && busyBefore > 0.25) log(`warning: ${busyBefore.toFixed(2)} cores were already busy; timings will be noisy`);
  const sizes = sizesAt(S.scale);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'leadwire-scale-'));
  // As root, PostgreSQL runs as `postgres` and must traverse the dir (mkdtemp makes 0700).
  await fs.chmod(dataDir, 0o755);
  const cleanups: (() => Promise<unknown>)[] = [() => fs.rm(dataDir, { recursive: true, force: true })];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch((err: unknown) => log(`cleanup: ${String(err)}`));
  };
  let stopDatabase: (() => Promise<void>) | undefined;
  // The database first: a seeding statement in flight then fails at once instead of holding its pool open for minutes.
  const onSignal = () =>
    void (stopDatabase?.() ?? Promise.resolve())
      .catch(() => {})
      .then(cleanup)
      .finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    log(`starting PostgreSQL under ${dataDir} ...`);
    const database = await openDatabase({ dataDir });
    cleanups.push(() => database.stop());
    stopDatabase = () => database.stop();
    const orm = await openOrm(database.url, { pool: { min: 0, max: 4 } });
    cleanups.push(() => orm.close(true));
    await migrateUp(orm);
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    // A connection that drops (the database stopped under it) fails its query; it must not crash the process unhandled.
    pool.on('error', (err) => log(`pool: ${err.message}`));
    cleanups.push(() => pool.end());
    // Every connection opened from here on plans its prepared statements for any organization, as a server ends up doing.
    await pool.query(
      `alter database ${pg.escapeIdentifier(new URL(database.url).pathname.slice(1))} set plan_cache_mode = force_generic_plan`,
    );
    const db = await openDb(orm);

    const w = await openWorkspace(db, pool, FIRST_CONTACTS);
    const meter = () => cpuMeter(process.pid, postmasterPid(dataDir));
    const timing = { warmupSeconds: S.warmupSeconds, seconds: S.seconds, meter, log };

    log('empty database: measuring ...');
    const empty = await measureAll(db, pool, w, { phase: 'empty', ...timing });
    log(
      `seeding ${f0(sizes.contacts)} contacts, ${f0(sizes.events)} events, ${f0(sizes.pageViews)} page views over ${f0(sizes.organizations)} workspaces ...`,
    );
    const seeded = await seedScale(pool, { largeOrgId: w.orgId, largeFirst: FIRST_CONTACTS }, sizes, log);
    log(`seeded in ${Math.round(seeded.seconds)} s`);
    const { rows: counts } = await pool.query<{ name: string; rows: string; mb: string }>(
      `select relname as name, n_live_tup::text as rows, (pg_total_relation_size(relid) / 1048576)::text as mb from pg_stat_user_tables
       where relname in ('contacts', 'companies', 'outbox_events', 'page_views', 'tracking_visitors', 'webhook_deliveries') order by relname`,
    );
    log('seeded database: measuring ...');
    const full = await measureAll(db, pool, { ...w, contacts: seeded.largeContacts }, { phase: 'seeded', ...timing });

    const cpus = os.cpus();
    const out = process.stdout;
    out.write(`\nLeadwire at scale (${new Date().toISOString()})\n`);
    out.write(`machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'cpu'}; node ${process.version}\n`);
    if (busyBefore !== null) out.write(`before start: ${busyBefore.toFixed(2)} of ${cpus.length} cores busy with other work\n`);
    out.write(
      `seeded (scale ${S.scale}) in ${Math.round(seeded.seconds)} s: ${counts.map((c) => `${c.name} ${f0(Number(c.rows))} rows, ${f0(Number(c.mb))} MB`).join('; ')}; ` +
        `the measured workspace holds ${f0(seeded.largeContacts)} contacts and ${Math.round(sizes.largeShare * 100)}% of the events and page views\n`,
    );
    out.write(
      `timing: ${S.warmupSeconds} s warm-up then ${S.seconds} s per operation; generic plans; CPU = this process (the services) + PostgreSQL\n\n`,
    );
    out.write(`${formatScale(empty, full, ROWS_LIMIT)}\n\n`);
    const goals = scaleGoals(empty, full, ROWS_LIMIT);
    out.write(`BENCH_SCALE_RESULT ${JSON.stringify({ settings: S, sizes, seedSeconds: seeded.seconds, empty, seeded: full, goals })}\n`);
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:scale failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
