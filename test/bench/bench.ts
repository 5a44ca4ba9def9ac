/**
 * `npm run bench`: the contact write path and the rate limits under load, on this machine, in one run.
 *
 * Starts the real server (`node apps/server/src/main.ts`) on a fresh embedded PostgreSQL, creates an organization and
 * Public API keys with the admin service, seeds contacts, then measures:
 *   0. the idle server: the transactions it commits a second with no traffic (after a quiet spell);
 *   1. the reference: a one-statement `insert ... on conflict do update` driven by pgbench at the same concurrency;
 *      the runtime's ceiling: the same statement behind a bare node:http server with the same pg driver, driven by
 *      the same load generator as the API (what no application code on this runtime and these cores can beat);
 *      and Leadwire's services (authenticate, upsertContact) behind the same bare server: the API without its framework;
 *   2. POST /api/v1/contacts/upsert, one contact per request;
 *   3. POST /api/v1/contacts/batch-upsert, 100 contacts per request;
 *   4. the rate limits: /healthz, a well-behaved tenant idle, beside a key over its limit, beside a flood of unknown keys;
 *   5. the HTTP edge under abuse (edge.ts, on a server of its own): the tenant beside slow connections, sign-up and
 *      sign-in floods, unknown keys and a spent key, each from one address.
 * It prints the figures, the ratios to the reference and each goal as met or missed, and a final `BENCH_RESULT {json}`
 * line. It reports; it never fails on timings.
 *
 * Settings (environment): BENCH_CONNECTIONS (50), BENCH_BATCH_CONNECTIONS (10), BENCH_SECONDS (12),
 * BENCH_WARMUP_SECONDS (3), BENCH_LIMIT_SECONDS (8), BENCH_EXISTING_RATIO (0.5), BENCH_SEED_CONTACTS (50000),
 * BENCH_BATCH_SIZE (100), BENCH_IDLE_QUIET_SECONDS (20), BENCH_IDLE_SECONDS (30), BENCH_SERVER_NODE_ARGS (extra node flags for the server, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_ONLY (comma list of phases to run: idle,pgbench,ceiling,services,upsert,batch,limits,edge),
 * and the edge phase's own (see edge.ts).
 */
import os from 'node:os';
import { loadConfig } from '@leadwire/core';
import pg from 'pg';
import { type HttpPhaseOptions, runBatchUpserts, runSingleUpserts } from './http-load.ts';
import { edgeJson, edgeSettings } from './edge.ts';
import { formatEdge } from './edge-report.ts';
import { runEdge } from './edge-run.ts';
import { runLimitPhases } from './limits.ts';
import { measureIdle } from './idle.ts';
import { findPgbench, runPgbench } from './pgbench.ts';
import { cpuCost, formatReport, goals } from './report.ts';
import { cpuMeter, machineBusyCores, postmasterPid } from './cpu.ts';
import { startServer } from './server.ts';
import { type BareServer, startBare } from './bare.ts';
import { clusterUrl, createBenchOrg, envNumber, seedContacts } from './setup.ts';
import { workload } from './workload.ts';
import { writeProfiler } from './write-profile.ts';

const S = {
  connections: envNumber('BENCH_CONNECTIONS', 50),
  batchConnections: envNumber('BENCH_BATCH_CONNECTIONS', 10),
  seconds: envNumber('BENCH_SECONDS', 12),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3),
  limitSeconds: Math.max(2, envNumber('BENCH_LIMIT_SECONDS', 8)),
  existingRatio: Math.min(1, envNumber('BENCH_EXISTING_RATIO', 0.5)),
  seedContacts: Math.max(1000, envNumber('BENCH_SEED_CONTACTS', 50_000)),
  batchSize: Math.min(100, Math.max(1, envNumber('BENCH_BATCH_SIZE', 100))),
  idleQuietSeconds: Math.max(0, envNumber('BENCH_IDLE_QUIET_SECONDS', 20)),
  idleSeconds: Math.max(5, envNumber('BENCH_IDLE_SECONDS', 30)),
};

const PHASES = ['idle', 'pgbench', 'ceiling', 'services', 'upsert', 'batch', 'limits', 'edge'] as const;
type Phase = (typeof PHASES)[number];
const only = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
for (const p of only) if (!PHASES.includes(p as Phase)) throw new Error(`BENCH_ONLY: unknown phase ${p} (phases: ${PHASES.join(', ')})`);
const runs = (p: Phase) => only.length === 0 || only.includes(p);

/** Keys per phase: the limit is 600 requests per minute per key, and these sizes leave room for about 10,000 req/s. */
const KEYS = { upsert: 300, batch: 40, limits: 5 };

const log = (msg: string) => process.stderr.write(`${msg}\n`);

async function main() {
  const busyBefore = await machineBusyCores(2000);
  if (busyBefore !== null && busyBefore > 0.25) {
    log(`warning: ${busyBefore.toFixed(2)} cores were already busy before the benchmark started; its figures will be low`);
  }
  const figures = PHASES.some((p) => p !== 'edge' && runs(p)) ? await mainPhases(busyBefore) : {};
  // After the main server has stopped: the edge phase starts one of its own, with the settings it needs.
  const edge = runs('edge') ? await runEdge(edgeSettings(), log) : null;
  if (edge) process.stdout.write(`\n${formatEdge(edge)}\n\n`);
  process.stdout.write(`BENCH_RESULT ${JSON.stringify({ ...figures, ...(edge ? { edge: edgeJson(edge) } : {}) })}\n`);
}

async function mainPhases(busyBefore: number | null): Promise<Record<string, unknown>> {
  const pgbench = runs('pgbench') ? await findPgbench(log) : null;
  log(`starting server (${process.execPath}) ...`);
  // These phases measure what a request or a refusal costs; the pacing of refusals (held a second past 20 a second per
  // address) is measured by the edge phase on a server of its own, so it is off here unless asked for.
  const server = await startServer({ V1_REFUSAL_DELAY_MS: process.env.V1_REFUSAL_DELAY_MS ?? '0' });
  const onSignal = () => void server.stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let pool: pg.Pool | undefined;
  try {
    const serverConfig = loadConfig(server.env);
    const url = await clusterUrl(server.dataDir);
    pool = new pg.Pool({ connectionString: url, max: 2 });
    const {
      rows: [info],
    } = await pool.query<{ version: string; sync: string; fsync: string; max_conn: string }>(
      `select version() as version, current_setting('synchronous_commit') as sync, current_setting('fsync') as fsync,
         current_setting('max_connections') as max_conn`,
    );

    const keyCount = KEYS.upsert + KEYS.batch + KEYS.limits;
    log(`creating organization, ${keyCount} API keys and ${S.seedContacts} seed contacts ...`);
    const org = await createBenchOrg(url, keyCount);
    const keys = {
      upsert: org.keys.slice(0, KEYS.upsert),
      batch: org.keys.slice(KEYS.upsert, KEYS.upsert + KEYS.batch),
      limits: org.keys.slice(KEYS.upsert + KEYS.batch),
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
      writes: () => writeProfiler(pool!, server.origin),
    });

    // First, before any load: what the server costs its database when nothing happens (its pollers, its timers).
    let idle = null;
    if (runs('idle')) {
      log(`idle: ${S.idleQuietSeconds}s quiet, then ${S.idleSeconds}s counting the server's commits ...`);
      idle = await measureIdle(pool, S.idleQuietSeconds, S.idleSeconds);
    }

    let reference = null;
    if (pgbench) {
      log(`reference: pgbench (${pgbench}), ${S.connections} clients, ${S.warmupSeconds}s warm-up + ${S.seconds}s ...`);
      reference = await runPgbench({
        binary: pgbench,
        url,
        pool,
        clients: S.connections,
        warmupSeconds: S.warmupSeconds,
        seconds: S.seconds,
        seeds: S.seedContacts,
        meter,
      });
    }
    // The single upsert's request mix against a bare node:http server of the same pool size, measured like the API.
    const poolSize = String(serverConfig.DB_POOL_MAX);
    const bareUpserts = async (name: 'ceiling' | 'services', start: () => Promise<BareServer>) => {
      log(`${name}: bare node:http server, ${S.connections} connections, ${S.warmupSeconds}s warm-up + ${S.seconds}s ...`);
      const bare = await start();
      try {
        const o = { ...phase(keys.upsert, S.connections), origin: bare.origin, meter: () => cpuMeter(bare.pid, postmaster) };
        return await runSingleUpserts(o, workload({ phase: name, ...mix }));
      } finally {
        await bare.stop();
      }
    };
    const ceiling = runs('ceiling')
      ? await bareUpserts('ceiling', () => startBare('ceiling-server.ts', [url, poolSize, String(S.seedContacts)]))
      : null;
    const services = runs('services') ? await bareUpserts('services', () => startBare('services-server.ts', [url, poolSize])) : null;
    let upsert = null;
    if (runs('upsert')) {
      log(`upsert: ${S.connections} connections, ${S.warmupSeconds}s warm-up + ${S.seconds}s ...`);
      upsert = await runSingleUpserts(phase(keys.upsert, S.connections), workload({ phase: 'upsert', ...mix }));
    }
    let batch = null;
    if (runs('batch')) {
      log(`batch-upsert x${S.batchSize}: ${S.batchConnections} connections ...`);
      batch = await runBatchUpserts(phase(keys.batch, S.batchConnections), workload({ phase: 'batch', ...mix }), S.batchSize);
    }
    const limits = runs('limits')
      ? await runLimitPhases({
          origin: server.origin,
          pool,
          abusedKey: keys.limits[0]!,
          goodKeys: keys.limits.slice(1),
          connections: S.connections,
          warmupSeconds: Math.min(2, S.warmupSeconds),
          seconds: S.limitSeconds,
          seedCount: S.seedContacts,
          log,
          meter,
        })
      : null;

    const cpus = os.cpus();
    const out = process.stdout;
    out.write(`\nLeadwire benchmark (${new Date().toISOString()})\n`);
    out.write(
      `machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; node ${process.version}\n`,
    );
    out.write(
      `database: embedded ${info?.version.split(' ').slice(0, 2).join(' ')}, fsync=${info?.fsync}, synchronous_commit=${info?.sync}, max_connections=${info?.max_conn}\n`,
    );
    out.write(`server: ROLE=all, LOG_LEVEL=warn, DB_POOL_MAX=${serverConfig.DB_POOL_MAX}\n`);
    out.write(
      `mix: ${Math.round(S.existingRatio * 100)}% existing emails (random among ${S.seedContacts.toLocaleString('en-US')} seeded contacts), ` +
        `${Math.round((1 - S.existingRatio) * 100)}% new; each row sends email, names, phone, title, 2 tags, 2 custom keys\n`,
    );
    if (busyBefore !== null) out.write(`before start: ${busyBefore.toFixed(2)} of ${cpus.length} cores busy with other work\n`);
    if (reference) {
      out.write(
        `reference: ${reference.version}, one-statement insert ... on conflict (email) do update of a 4-column row, half existing ` +
          `and half new keys, -M prepared, ${reference.clients} clients, on the same database\n`,
      );
    }
    out.write(
      `timing: ${S.warmupSeconds}s warm-up (discarded) then ${S.seconds}s measured per write phase; ${S.limitSeconds}s per limit phase\n`,
    );
    out.write(
      'note: the load generator (autocannon, pgbench) runs on the same cores as the server and PostgreSQL, ' +
        'so every figure here is lower than a dedicated load machine would see; the ratios are what compare across machines.\n\n',
    );
    const r = { reference, ceiling, services, upsert, batch, limits, idle, batchSize: S.batchSize };
    out.write(`${formatReport(r)}\n\n`);
    const result = {
      settings: S,
      busyCoresBeforeStart: busyBefore,
      reference: reference && { tps: reference.tps, latencyAvgMs: reference.latencyAvgMs, failed: reference.failed, cpu: reference.cpu },
      ...Object.fromEntries(
        Object.entries({ ceiling, services }).map(([name, p]) => [
          name,
          p && { reqPerSec: p.reqPerSec, ...p.latencyMs, non2xx: p.non2xx, cpuCostPerRequest: cpuCost(p.cpu, p.reqPerSec) },
        ]),
      ),
      upsert: upsert && {
        reqPerSec: upsert.reqPerSec,
        ...upsert.latencyMs,
        non2xx: upsert.non2xx,
        errors: upsert.errors + upsert.timeouts,
        cpuCostPerRequest: cpuCost(upsert.cpu, upsert.reqPerSec),
      },
      batch: batch && {
        contactsPerSec: batch.contactsPerSec,
        reqPerSec: batch.reqPerSec,
        ...batch.latencyMs,
        non2xx: batch.non2xx,
        failedRows: batch.rows.failed,
        cpuCostPerContact: cpuCost(batch.cpu, batch.contactsPerSec),
      },
      limits,
      idle: idle && { commitsPerSec: idle.commitsPerSec, seconds: idle.seconds, busiest: idle.busiest },
      goals: goals(r),
    };
    return result;
  } finally {
    await pool?.end();
    log('stopping server ...');
    await server.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
