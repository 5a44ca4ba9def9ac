/**
 * `npm run bench`: the contact write path under load, on this machine, in one run.
 *
 * Starts the real server (`node apps/server/src/main.ts`) on a fresh embedded PostgreSQL, creates an organization and
 * Public API keys with the admin service, seeds contacts, then measures three phases:
 *   1. POST /api/v1/contacts/upsert, one contact per request;
 *   2. POST /api/v1/contacts/batch-upsert, 100 contacts per request;
 *   3. the statements of one upsert driven straight through `pg`, as the ceiling the API is compared with.
 * It prints a table and a final `BENCH_RESULT {json}` line. It reports; it never asserts on timings.
 *
 * Settings (environment): BENCH_CONNECTIONS (50), BENCH_BATCH_CONNECTIONS (10), BENCH_SECONDS (12),
 * BENCH_WARMUP_SECONDS (3), BENCH_EXISTING_RATIO (0.5), BENCH_SEED_CONTACTS (50000), BENCH_BATCH_SIZE (100),
 * BENCH_SERVER_NODE_ARGS (extra node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import os from 'node:os';
import { loadConfig } from '@leadwire/core';
import pg from 'pg';
import { type HttpPhaseOptions, runBatchUpserts, runSingleUpserts } from './http-load.ts';
import { runRawSql } from './raw-sql.ts';
import { cpuCost, formatReport } from './report.ts';
import { cpuMeter, machineBusyCores, postmasterPid } from './cpu.ts';
import { startServer } from './server.ts';
import { clusterUrl, createBenchOrg, seedContacts } from './setup.ts';
import { workload } from './workload.ts';

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
  return n;
}

const S = {
  connections: setting('BENCH_CONNECTIONS', 50),
  batchConnections: setting('BENCH_BATCH_CONNECTIONS', 10),
  seconds: setting('BENCH_SECONDS', 12),
  warmupSeconds: setting('BENCH_WARMUP_SECONDS', 3),
  existingRatio: Math.min(1, setting('BENCH_EXISTING_RATIO', 0.5)),
  seedContacts: Math.max(1000, setting('BENCH_SEED_CONTACTS', 50_000)),
  batchSize: Math.min(100, Math.max(1, setting('BENCH_BATCH_SIZE', 100))),
};

/** Keys per phase: the limit is 600 requests per minute per key, and these sizes leave room for about 10,000 req/s. */
const KEYS = { upsert: 300, batch: 40, raw: 300 };

const log = (msg: string) => process.stderr.write(`${msg}\n`);

async function main() {
  const busyBefore = await machineBusyCores(2000);
  if (busyBefore !== null && busyBefore > 0.25) {
    log(`warning: ${busyBefore.toFixed(2)} cores were already busy before the benchmark started; its figures will be low`);
  }
  log(`starting server (${process.execPath}) ...`);
  const server = await startServer();
  const onSignal = () => void server.stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let pool: pg.Pool | undefined;
  try {
    const url = await clusterUrl(server.dataDir);
    pool = new pg.Pool({ connectionString: url, max: 2 });
    const { rows: [info] } = await pool.query<{ version: string; sync: string; fsync: string; max_conn: string }>(
      `select version() as version, current_setting('synchronous_commit') as sync, current_setting('fsync') as fsync,
         current_setting('max_connections') as max_conn`,
    );

    log(`creating organization, ${KEYS.upsert + KEYS.batch + KEYS.raw} API keys and ${S.seedContacts} seed contacts ...`);
    const org = await createBenchOrg(url, KEYS.upsert + KEYS.batch + KEYS.raw);
    const keys = {
      upsert: org.keys.slice(0, KEYS.upsert),
      batch: org.keys.slice(KEYS.upsert, KEYS.upsert + KEYS.batch),
      raw: org.keys.slice(KEYS.upsert + KEYS.batch),
    };
    await seedContacts(pool, org.orgId, S.seedContacts);
    const postmaster = postmasterPid(server.dataDir);
    const meter = () => cpuMeter(server.pid, postmaster);
    const mix = { seedCount: S.seedContacts, existingRatio: S.existingRatio };
    const phase = (keySet: string[], connections: number): HttpPhaseOptions => ({
      origin: server.origin,
      keys: keySet,
      connections,
      warmupSeconds: S.warmupSeconds,
      seconds: S.seconds,
      meter,
    });

    log(`phase 1/3: upsert, ${S.connections} connections, ${S.warmupSeconds}s warm-up + ${S.seconds}s ...`);
    const upsert = await runSingleUpserts(phase(keys.upsert, S.connections), workload({ phase: 'upsert', ...mix }));
    log(`phase 2/3: batch-upsert x${S.batchSize}, ${S.batchConnections} connections ...`);
    const batch = await runBatchUpserts(phase(keys.batch, S.batchConnections), workload({ phase: 'batch', ...mix }), S.batchSize);
    log(`phase 3/3: raw SQL through pg, ${S.connections} clients ...`);
    const raw = await runRawSql({
      url,
      keys: keys.raw,
      clients: S.connections,
      warmupSeconds: S.warmupSeconds,
      seconds: S.seconds,
      work: workload({ phase: 'raw', ...mix }),
      meter,
    });

    const serverConfig = loadConfig(server.env);
    const cpus = os.cpus();
    const out = process.stdout;
    out.write(`\nLeadwire contact write benchmark (${new Date().toISOString()})\n`);
    out.write(`machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; node ${process.version}\n`);
    out.write(`database: embedded ${info?.version.split(' ').slice(0, 2).join(' ')}, fsync=${info?.fsync}, synchronous_commit=${info?.sync}, max_connections=${info?.max_conn}\n`);
    out.write(`server: ROLE=all, LOG_LEVEL=warn, DB_POOL_MAX=${serverConfig.DB_POOL_MAX}\n`);
    out.write(
      `mix: ${Math.round(S.existingRatio * 100)}% existing emails (random among ${S.seedContacts.toLocaleString('en-US')} seeded contacts), ` +
        `${Math.round((1 - S.existingRatio) * 100)}% new; each row sends email, names, phone, title, 2 tags, 2 custom keys\n`,
    );
    if (busyBefore !== null) out.write(`before start: ${busyBefore.toFixed(2)} of ${cpus.length} cores busy with other work\n`);
    out.write(
      'raw SQL: the statements of one upsert (imported from the application), one transaction each, as the same named ' +
        `prepared statements over ${S.connections} dedicated connections; the API runs them over its pool of ${serverConfig.DB_POOL_MAX}\n`,
    );
    out.write(`timing: ${S.warmupSeconds}s warm-up (discarded) then ${S.seconds}s measured per phase\n`);
    out.write(
      'note: the load generator (autocannon, or the pg clients) runs on the same cores as the server and PostgreSQL, ' +
        'so every figure here is lower than a dedicated load machine would see.\n\n',
    );
    out.write(`${formatReport({ upsert, batch, raw, batchSize: S.batchSize })}\n\n`);
    const result = {
      settings: S,
      upsert: {
        reqPerSec: upsert.reqPerSec,
        ...upsert.latencyMs,
        non2xx: upsert.non2xx,
        status429: upsert.status429,
        errors: upsert.errors + upsert.timeouts,
        cpu: upsert.cpu,
        cpuCostPerRequest: cpuCost(upsert.cpu, upsert.reqPerSec),
      },
      batch: {
        contactsPerSec: batch.contactsPerSec,
        reqPerSec: batch.reqPerSec,
        ...batch.latencyMs,
        non2xx: batch.non2xx,
        status429: batch.status429,
        failedRows: batch.rows.failed,
        cpu: batch.cpu,
        cpuCostPerContact: cpuCost(batch.cpu, batch.contactsPerSec),
      },
      raw: { opsPerSec: raw.opsPerSec, ...raw.latencyMs, errors: raw.errors, cpu: raw.cpu, cpuCostPerUpsert: cpuCost(raw.cpu, raw.opsPerSec) },
      busyCoresBeforeStart: busyBefore,
      apiToRaw: raw.opsPerSec ? upsert.reqPerSec / raw.opsPerSec : null,
    };
    out.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
  } finally {
    await pool?.end();
    log('stopping server ...');
    await server.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
