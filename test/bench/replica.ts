/**
 * `npm run bench:replica`: what a read replica takes off the primary, on this machine (issue 31).
 *
 * Starts a primary and a streaming hot standby (test/support/standby.ts), writes one workspace to the primary
 * (BENCH_REPLICA_CONTACTS contacts, BENCH_REPLICA_EVENTS events), and runs the real server as its own process twice on
 * the same pair: without DATABASE_REPLICA_URLS (every read on the primary) and with the standby as its replica. Each
 * run measures three phases:
 *   - reads: a read-heavy mix of contact lists, feed pages, searches by email and gets by id, by keys that only read;
 *   - upserts: single contact upserts (what read-your-writes costs the writer: one statement after each write);
 *   - mixed: one upsert to nine reads by the same keys (how many reads read-your-writes sends to the primary).
 * For each: requests/s, p50 and p99, and the CPU per request of each PostgreSQL (the standby replays in both runs),
 * plus the server's count of reads by pool. Both servers share this machine's cores with the load generator: the
 * figures compare the two runs, they are not what two machines would do. It reports; it never fails on figures.
 * Last line: `BENCH_REPLICA_RESULT {json}`.
 *
 * Settings (environment): BENCH_CONNECTIONS (20), BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3),
 * BENCH_REPLICA_CONTACTS (50000), BENCH_REPLICA_EVENTS (200000), BENCH_REPLICA_KEYS (300).
 */
import os from 'node:os';
import pg from 'pg';
import { cpuMeter, machineBusyCores } from './cpu.ts';
import { cpuCost } from './report.ts';
import { createReplicaWorkspace, MIXED, type PhaseOptions, type PhaseResult, READ_MIX, runMix } from './replica-load.ts';
import { startServer } from './server.ts';
import { envNumber } from './setup.ts';
import { startReplicationPair } from '../support/standby.ts';
import { scrapeMetrics } from '../ops/prom-text.ts';

const S = {
  connections: envNumber('BENCH_CONNECTIONS', 20, 1),
  seconds: envNumber('BENCH_SECONDS', 10, 1),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3),
  contacts: envNumber('BENCH_REPLICA_CONTACTS', 50_000, 1_000),
  events: envNumber('BENCH_REPLICA_EVENTS', 200_000, 1_000),
  keys: envNumber('BENCH_REPLICA_KEYS', 300, 10),
};

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const f0 = (n: number) => Math.round(n).toLocaleString('en-US');
const f2 = (n: number) => n.toFixed(2);

interface Run {
  replica: boolean;
  phases: (PhaseResult & { pools: Record<string, number> })[];
}

/** The server's replica-safe reads by pool and its fallbacks by reason, from its /metrics. */
async function poolCounts(origin: string): Promise<Record<string, number>> {
  const { samples } = await scrapeMetrics(origin);
  const out: Record<string, number> = {};
  for (const s of samples) {
    if (s.name === 'leadwire_db_replica_safe_reads_total') out[s.labels.pool!] = s.value;
    if (s.name === 'leadwire_db_replica_fallbacks_total') out[`fallback ${s.labels.reason}`] = s.value;
  }
  return out;
}

function describe(p: PhaseResult & { pools: Record<string, number> }): string[] {
  const primary = cpuCost(p.primary, p.perSec);
  const standby = cpuCost(p.standby, p.perSec);
  const pools = Object.entries(p.pools)
    .map(([k, v]) => `${k} ${f0(v)}`)
    .join(', ');
  return [
    `  ${p.name}: ${f0(p.perSec)} requests/s, p50 ${f2(p.latencyMs.p50)} ms, p99 ${f2(p.latencyMs.p99)} ms (non-2xx ${p.non2xx}, errors ${p.errors})`,
    primary && standby
      ? `    CPU per request: server ${f2(primary.serverMs)} ms, primary ${f2(primary.postgresMs)} ms, standby ${f2(standby.postgresMs)} ms; ` +
        `cores busy ${f2(p.primary!.machine)} of ${p.primary!.cores} (primary ${f2(p.primary!.postgres)}, standby ${f2(p.standby!.postgres)}, ` +
        `server ${f2(p.primary!.server)}, load generator ${f2(p.primary!.loadGenerator)})`
      : '    CPU: not measured (no /proc)',
    `    reads by pool: ${pools || 'not counted (no replicas configured)'}`,
  ];
}

/**
 * Read-your-writes' own cost, alone: the statement the server runs on the primary after each write, `select
 * pg_current_wal_insert_lsn()`, prepared, one after another on one connection (its wall time is the writer's wait).
 */
async function measureWritePosition(url: string, postmaster: number, calls = 2_000) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const query = { name: 'write_position', text: 'select pg_current_wal_insert_lsn()::text as lsn' };
    for (let i = 0; i < 200; i++) await client.query(query);
    const stop = cpuMeter(process.pid, postmaster);
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await client.query(query);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = stop();
    return { calls, latencyMs: (seconds * 1000) / calls, primaryCpuMs: cpu ? (cpu.postgres * seconds * 1000) / calls : null };
  } finally {
    await client.end();
  }
}

async function main() {
  const busyBefore = await machineBusyCores(2000);
  if (busyBefore !== null && busyBefore > 0.25) log(`warning: ${busyBefore.toFixed(2)} cores were already busy; the figures will be noisy`);
  log('starting a primary and a streaming standby ...');
  const pair = await startReplicationPair();
  const runs: Run[] = [];
  let ryw: { calls: number; latencyMs: number; primaryCpuMs: number | null } | undefined;
  try {
    const pids = await pair.pids();
    // The schema: the server migrates on its first start; the workspace is written after it.
    log('migrating (a first server start) ...');
    const first = await startServer({ DATABASE_URL: pair.primary.url });
    await first.stop();
    log(`writing ${f0(S.contacts)} contacts, ${f0(S.events)} events and ${S.keys * 2} keys ...`);
    const workspace = await createReplicaWorkspace(pair.primary.url, S.contacts, S.events, S.keys);
    await pair.standby.caughtUp(300_000);
    ryw = await measureWritePosition(pair.primary.url, pids.primary);
    for (const replica of [false, true]) {
      log(`server ${replica ? 'with' : 'without'} the replica ...`);
      const server = await startServer({
        DATABASE_URL: pair.primary.url,
        ...(replica ? { DATABASE_REPLICA_URLS: pair.standby.url } : {}),
        V1_REFUSAL_DELAY_MS: '0',
      });
      try {
        const meter = () => {
          const p = cpuMeter(server.pid, pids.primary);
          const s = cpuMeter(server.pid, pids.standby);
          return () => ({ primary: p(), standby: s() });
        };
        const o: PhaseOptions = {
          origin: server.origin,
          workspace,
          connections: S.connections,
          warmupSeconds: S.warmupSeconds,
          seconds: S.seconds,
          meter,
        };
        const run: Run = { replica, phases: [] };
        for (const [name, mix, keys] of [
          ['reads', READ_MIX, workspace.readers],
          ['upserts', ['upsert'] as const, workspace.writers],
          ['mixed', MIXED, workspace.writers],
        ] as const) {
          log(`  ${name} ...`);
          const before = await poolCounts(server.origin);
          const phase = await runMix(name, mix, keys, o);
          const after = await poolCounts(server.origin);
          const pools = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
          run.phases.push({ ...phase, pools });
        }
        runs.push(run);
      } finally {
        await server.stop();
      }
    }
  } finally {
    await pair.stop();
  }

  const cpus = os.cpus();
  const out = process.stdout;
  out.write(`\nLeadwire read replica benchmark (${new Date().toISOString()})\n`);
  out.write(`machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'cpu'}; node ${process.version}\n`);
  if (busyBefore !== null) out.write(`before start: ${busyBefore.toFixed(2)} of ${cpus.length} cores busy with other work\n`);
  out.write(
    `workspace: ${f0(S.contacts)} contacts, ${f0(S.events)} events; ${S.connections} connections, ${S.warmupSeconds}s warm-up then ` +
      `${S.seconds}s measured per phase; primary, standby, server and load generator on the same ${cpus.length} cores\n\n`,
  );
  for (const run of runs) {
    out.write(`${run.replica ? 'with the standby as read replica' : 'without a replica (every read on the primary)'}\n`);
    for (const p of run.phases) out.write(`${describe(p).join('\n')}\n`);
    out.write('\n');
  }
  // The run without a replica is the same-run reference of the one with it.
  const [without, withReplica] = runs;
  const phase = (r: Run | undefined, name: string) => r?.phases.find((p) => p.name === name);
  const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b ? `${f2(a / b)}x` : 'n/a');
  const primaryMs = (p: PhaseResult | undefined) => (p ? cpuCost(p.primary, p.perSec)?.postgresMs : undefined);
  const reads = [phase(without, 'reads'), phase(withReplica, 'reads')] as const;
  const ups = [phase(without, 'upserts'), phase(withReplica, 'upserts')] as const;
  const mixed = phase(withReplica, 'mixed');
  const kept = mixed ? (mixed.pools.primary ?? 0) / ((mixed.pools.primary ?? 0) + (mixed.pools.replica1 ?? 0) || 1) : undefined;
  out.write('with the replica against without (same run):\n');
  out.write(
    `  reads: primary CPU per read ${ratio(primaryMs(reads[1]), primaryMs(reads[0]))}, reads/s ${ratio(reads[1]?.perSec, reads[0]?.perSec)}, ` +
      `p99 ${ratio(reads[1]?.latencyMs.p99, reads[0]?.latencyMs.p99)}\n`,
  );
  out.write(
    `  upserts (read-your-writes' statement): primary CPU per upsert ${ratio(primaryMs(ups[1]), primaryMs(ups[0]))}, ` +
      `server CPU per upsert ${ratio(ups[1] && cpuCost(ups[1].primary, ups[1].perSec)?.serverMs, ups[0] && cpuCost(ups[0].primary, ups[0].perSec)?.serverMs)}, ` +
      `p99 ${ratio(ups[1]?.latencyMs.p99, ups[0]?.latencyMs.p99)}\n`,
  );
  if (ryw)
    out.write(
      `  read-your-writes' statement alone (${f0(ryw.calls)} calls in a row): ${f2(ryw.latencyMs)} ms each` +
        (ryw.primaryCpuMs === null ? '\n' : `, primary CPU ${f2(ryw.primaryCpuMs)} ms each\n`),
    );
  if (kept !== undefined)
    out.write(`  mixed: ${(100 * kept).toFixed(1)}% of the replica-safe reads kept on the primary by read-your-writes\n\n`);
  const result = {
    settings: S,
    busyCoresBeforeStart: busyBefore,
    writePositionStatement: ryw,
    runs: runs.map((r) => ({
      replica: r.replica,
      phases: r.phases.map((p) => ({
        name: p.name,
        perSec: p.perSec,
        ...p.latencyMs,
        non2xx: p.non2xx,
        primaryCpuMsPerRequest: cpuCost(p.primary, p.perSec)?.postgresMs ?? null,
        standbyCpuMsPerRequest: cpuCost(p.standby, p.perSec)?.postgresMs ?? null,
        serverCpuMsPerRequest: cpuCost(p.primary, p.perSec)?.serverMs ?? null,
        pools: p.pools,
      })),
    })),
  };
  out.write(`BENCH_REPLICA_RESULT ${JSON.stringify(result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:replica failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
