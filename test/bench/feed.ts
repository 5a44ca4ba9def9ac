/**
 * `npm run bench:feed`: the changes feed (GET /api/v1/events) under load, on this machine.
 *
 * Starts the real server on a fresh embedded PostgreSQL, writes a workspace of 1,000,000 events and a small one of
 * 1,000 (realistic payloads: a whole contact), then measures, for each workspace:
 *   - the reference: the page's own statement, prepared, driven by pgbench at the same concurrency from the same
 *     positions (what the database alone does per page);
 *   - GET /api/v1/events?limit=100 from positions spread over the workspace: pages and events per second, latency,
 *     CPU per page (server and PostgreSQL), and the share of the reference;
 *   - on the large workspace, a filter on an event one in 10,000 events is (`types=form.submitted`): every page walks
 *     the whole window (FEED_SCAN_WINDOW, 1,000 events) and mostly finds nothing: the most a page can cost.
 * Beside them, the contact write path's reference of `npm run bench` (pgbench upsert), so the figures compare.
 *
 * Settings (environment): BENCH_CONNECTIONS (20), BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3), BENCH_FEED_EVENTS
 * (1000000), BENCH_FEED_KEYS (200). It reports; it never fails on timings. Last line: `BENCH_FEED_RESULT {json}`.
 */
import os from 'node:os';
import { FEED_PAGE, FEED_PAGE_OF_TYPES } from '#core/feed/sql.ts';
import pg from 'pg';
import { cpuCost } from './report.ts';
import { cpuMeter, machineBusyCores, postmasterPid } from './cpu.ts';
import { createFeedWorkspace, type FeedPhaseResult, RARE_EVENT, runFeedPhase } from './feed-load.ts';
import { type FeedReferenceResult, runFeedReference } from './feed-reference.ts';
import { findPgbench, runPgbench } from './pgbench.ts';
import { startServer } from './server.ts';
import { clusterUrl, envNumber } from './setup.ts';

const S = {
  connections: envNumber('BENCH_CONNECTIONS', 20),
  seconds: envNumber('BENCH_SECONDS', 10),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3),
  largeEvents: Math.max(10_000, envNumber('BENCH_FEED_EVENTS', 1_000_000)),
  smallEvents: 1_000,
  keys: Math.max(1, envNumber('BENCH_FEED_KEYS', 200)),
};
const PAGE = 100;
const WINDOW = 1_000;

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const f0 = (n: number) => Math.round(n).toLocaleString('en-US');
const f2 = (n: number) => n.toFixed(2);

interface Row {
  phase: FeedPhaseResult;
  reference: FeedReferenceResult;
}

function lines(rows: Row[], upsertReferenceTps: number): string[] {
  const out: string[] = [];
  for (const { phase: p, reference: r } of rows) {
    const cost = cpuCost(p.cpu, p.pagesPerSec);
    const refCost = cpuCost(r.cpu, r.tps);
    out.push(
      `${p.name}`,
      `  reference (the page statement, pgbench, ${S.connections} clients): ${f0(r.tps)} pages/s` +
        (refCost ? `, postgres ${f2(refCost.postgresMs)} ms CPU per page` : ''),
      `  GET /api/v1/events (${p.connections} connections): ${f0(p.pagesPerSec)} pages/s, ${f0(p.eventsPerSec)} events/s, ` +
        `p50 ${f2(p.latencyMs.p50)} ms, p99 ${f2(p.latencyMs.p99)} ms; ${(100 * (p.pagesPerSec / r.tps)).toFixed(1)}% of the reference, ` +
        `${(p.pagesPerSec / upsertReferenceTps).toFixed(2)}x the upsert reference's transactions/s`,
      cost
        ? `  CPU per page: server ${f2(cost.serverMs)} ms, postgres ${f2(cost.postgresMs)} ms (load generator ${f2(cost.loadGeneratorMs)} ms); ` +
            `cores busy ${f2(p.cpu!.machine)} of ${p.cpu!.cores} (other processes ${f2(p.cpu!.other)})`
        : '  CPU per page: not measured (no /proc)',
      `  non-2xx ${p.non2xx}, errors ${p.errors}`,
    );
  }
  return out;
}

async function main() {
  const busyBefore = await machineBusyCores(2000);
  if (busyBefore !== null && busyBefore > 0.25) log(`warning: ${busyBefore.toFixed(2)} cores were already busy; the figures will be low`);
  const pgbench = await findPgbench(log);
  log('starting server ...');
  const server = await startServer({ V1_REFUSAL_DELAY_MS: '0' });
  const pool = new pg.Pool({ connectionString: await clusterUrl(server.dataDir), max: 2 });
  try {
    const url = await clusterUrl(server.dataDir);
    const meter = () => cpuMeter(server.pid, postmasterPid(server.dataDir));
    log(`writing a workspace of ${f0(S.largeEvents)} events and one of ${f0(S.smallEvents)} ...`);
    const large = await createFeedWorkspace(url, pool, 'large', S.largeEvents, S.keys);
    const small = await createFeedWorkspace(url, pool, 'small', S.smallEvents, S.keys);
    const timing = { clients: S.connections, warmupSeconds: S.warmupSeconds, seconds: S.seconds, meter };
    log('reference: the contact upsert of npm run bench (pgbench) ...');
    const upsertRef = await runPgbench({ binary: pgbench, url, pool, seeds: 50_000, ...timing });
    const rows: Row[] = [];
    const measure = async (name: string, workspace: typeof large, query: string, types: string[] | null) => {
      log(`${name}: reference ...`);
      const base = { orgId: workspace.orgId, take: PAGE + 1 };
      const reference = types
        ? await runFeedReference({
            name,
            binary: pgbench,
            url,
            statement: FEED_PAGE_OF_TYPES,
            params: { ...base, window: WINDOW, types },
            workspace,
            ...timing,
          })
        : await runFeedReference({ name, binary: pgbench, url, statement: FEED_PAGE, params: base, workspace, ...timing });
      log(`${name}: GET /api/v1/events?${query} ...`);
      const phase = await runFeedPhase({ name, origin: server.origin, workspace, query, connections: S.connections, ...timing });
      rows.push({ phase, reference });
    };
    await measure(`${f0(S.largeEvents)} events, pages of ${PAGE}`, large, `limit=${PAGE}`, null);
    await measure(`${f0(S.smallEvents)} events, pages of ${PAGE}`, small, `limit=${PAGE}`, null);
    await measure(
      `${f0(S.largeEvents)} events, types=${RARE_EVENT} (1 in 10,000: each page walks the ${f0(WINDOW)}-event window)`,
      large,
      `limit=${PAGE}&types=${RARE_EVENT}`,
      [RARE_EVENT],
    );

    const cpus = os.cpus();
    const out = process.stdout;
    out.write(`\nLeadwire changes feed benchmark (${new Date().toISOString()})\n`);
    out.write(`machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'cpu'}; node ${process.version}\n`);
    if (busyBefore !== null) out.write(`before start: ${busyBefore.toFixed(2)} of ${cpus.length} cores busy with other work\n`);
    out.write(
      `timing: ${S.warmupSeconds}s warm-up then ${S.seconds}s measured per phase; pages start at 1,000 positions spread over the workspace\n`,
    );
    out.write(
      `upsert reference (npm run bench's): ${f0(upsertRef.tps)} transactions/s` +
        (cpuCost(upsertRef.cpu, upsertRef.tps) ? `, postgres ${f2(cpuCost(upsertRef.cpu, upsertRef.tps)!.postgresMs)} ms CPU each` : '') +
        '\n\n',
    );
    out.write(`${lines(rows, upsertRef.tps).join('\n')}\n\n`);
    const result = {
      settings: S,
      busyCoresBeforeStart: busyBefore,
      upsertReference: { tps: upsertRef.tps, cpu: cpuCost(upsertRef.cpu, upsertRef.tps) },
      phases: rows.map(({ phase: p, reference: r }) => ({
        name: p.name,
        pagesPerSec: p.pagesPerSec,
        eventsPerSec: p.eventsPerSec,
        ...p.latencyMs,
        non2xx: p.non2xx,
        cpuPerPage: cpuCost(p.cpu, p.pagesPerSec),
        reference: { pagesPerSec: r.tps, cpuPerPage: cpuCost(r.cpu, r.tps) },
      })),
    };
    out.write(`BENCH_FEED_RESULT ${JSON.stringify(result)}\n`);
  } finally {
    await pool.end();
    log('stopping server ...');
    await server.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:feed failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
