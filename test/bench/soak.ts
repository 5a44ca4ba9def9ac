/**
 * `npm run bench:soak [-- --minutes N]`: a mixed load held at a fixed, moderate rate for a long time, looking for
 * drift: memory that keeps growing, latency that creeps up, a delivery backlog that never drains.
 *
 * Starts the real server (ROLE=all, in a process group of its own, with its embedded PostgreSQL under a fresh data
 * dir) and a local HTTPS receiver, creates workspaces (each with seeded contacts, a form and an endpoint subscribed to
 * contact.created and form.submitted; enough of them that none nears its hourly delivery limit), then sends, open
 * loop: single upserts, searches by email, hosted-form submissions, tracking page views, and /healthz as the
 * reference measured in the same run. Every interval (a minute) it prints per kind the rate, p50, p99 and the p99's
 * ratio to /healthz's, and the server's RSS and heap (from its GET /metrics), the database's size and growth, the
 * delivery backlog, the deliveries received, and the CPU per operation of the server and of PostgreSQL.
 *
 * It fails (exit 1, saying why) by the rules of soak-rules.ts: the heap after GC, the RSS or the delivery backlog
 * growing without bound (a rising fit over the second half and still new highs in the last third), a kind's p99 at
 * the end (the median of the last third of the minutes) past 2x its p99 at the start (the median of the first third
 * after the warm-up minute), failed requests, or
 * deliveries lost once the load stops and the backlog drains. The heap after GC is exact: the server runs with
 * --trace-gc (full collections only) and the bench reads the heap each one left. Last line: `SOAK_RESULT {json}`.
 *
 * Settings: --minutes N (or SOAK_MINUTES; default 30), --interval-seconds S (SOAK_INTERVAL_SECONDS; default 60, lower
 * only for a quick check of the bench itself), SOAK_RATE (multiplies every kind's rate; default 1),
 * SOAK_SEEDS (contacts per workspace; 2000), SOAK_DRAIN_SECONDS (120), SOAK_P99_FLOOR_MS (10).
 * Everything it starts it stops, also on Ctrl-C or SIGTERM.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startReceiver, TEST_CA_PATH } from '../support/receiver.ts';
import { cpuMeter, machineBusyCores, postmasterPid } from './cpu.ts';
import { BASE_RATES, EXISTING_RATIO, KINDS, type Kind, type KindFigures, startSoakLoad } from './soak-load.ts';
import { DEFAULT_RULES, judge, type Sample } from './soak-rules.ts';
import { createSoakWorkspaces } from './soak-setup.ts';
import { cpuPerOp, databaseMb, gcTracker, watch } from './soak-watch.ts';
import { startServer } from './server.ts';
import { clusterUrl } from './setup.ts';

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

const { values: args } = parseArgs({ options: { minutes: { type: 'string' }, 'interval-seconds': { type: 'string' } } });
const S = {
  minutes: positive('--minutes', args.minutes ?? process.env.SOAK_MINUTES, 30),
  intervalSeconds: positive('--interval-seconds', args['interval-seconds'] ?? process.env.SOAK_INTERVAL_SECONDS, 60),
  rate: positive('SOAK_RATE', process.env.SOAK_RATE, 1),
  seeds: Math.round(positive('SOAK_SEEDS', process.env.SOAK_SEEDS, 2000)),
  drainSeconds: positive('SOAK_DRAIN_SECONDS', process.env.SOAK_DRAIN_SECONDS, 120),
};
const RULES = { ...DEFAULT_RULES, p99FloorMs: positive('SOAK_P99_FLOOR_MS', process.env.SOAK_P99_FLOOR_MS, DEFAULT_RULES.p99FloorMs) };
const RATES = Object.fromEntries(KINDS.map((k) => [k, BASE_RATES[k] * S.rate])) as Record<Kind, number>;
/** Each workspace stays under 900 of its 1,000 deliveries an hour, so the limit never skips one. */
const DELIVERIES_PER_WORKSPACE_HOUR = 900;
const SCRAPE_MS = 5_000;

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const out = (msg: string) => process.stdout.write(`${msg}\n`);
const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - performance.now())));

function kindLine(kind: Kind, k: KindFigures, ref: KindFigures): string {
  const ratio = kind === 'healthz' ? 'reference' : `${f1(k.p99Ms / ref.p99Ms)}x ref`;
  const errors = k.errors > 0 ? `, ERRORS ${k.errors} ${JSON.stringify(k.errorStatuses)}` : '';
  return `  ${kind.padEnd(8)} ${f1(k.perSec).padStart(6)}/s  p50 ${f1(k.p50Ms).padStart(6)} ms  p99 ${f1(k.p99Ms).padStart(7)} ms (${ratio})${errors}`;
}

async function main() {
  const intervals = Math.max(1, Math.round((S.minutes * 60) / S.intervalSeconds));
  // New contacts from half the upserts, and two deliveries per form submission.
  const deliveriesPerSec = RATES.upsert * (1 - EXISTING_RATIO) + RATES.form * 2;
  const workspaceCount = Math.max(10, Math.ceil((deliveriesPerSec * 3600) / DELIVERIES_PER_WORKSPACE_HOUR));
  const busyBefore = await machineBusyCores(2000);

  const received = new Set<string>();
  let duplicates = 0;
  const receiver = await startReceiver({
    responder: (req, res) => {
      const id = String(req.headers['webhook-id'] ?? '');
      if (received.has(id)) duplicates++;
      else received.add(id);
      res.writeHead(204).end();
    },
  });
  toStop.push(() => receiver.close());
  log(`receiver on ${receiver.origin}; starting server ...`);
  const gc = gcTracker();
  const starting = startServer(
    { WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: TEST_CA_PATH },
    { group: true, nodeArgs: ['--trace-gc', '--trace-gc-ignore-scavenger'], onLine: (line) => gc.onLine(line) },
  );
  // Registered before it is up: a Ctrl-C while it starts stops it once it has (it is in a group of its own, so the
  // terminal's signal does not reach it).
  toStop.push(async () => (await starting.catch(() => null))?.stop());
  const server = await starting;
  const pool = new pg.Pool({ connectionString: await clusterUrl(server.dataDir), max: 2 });
  // The server stops its PostgreSQL on Ctrl-C while this pool may still hold an idle connection: expected, not a crash.
  pool.on('error', () => {});
  toStop.push(() => pool.end());
  let exitCode: number;
  try {
    const url = await clusterUrl(server.dataDir);
    log(`creating ${workspaceCount} workspaces (${S.seeds} contacts, a form and an endpoint each) ...`);
    const workspaces = await createSoakWorkspaces({
      url,
      pool,
      origin: server.origin,
      receiverOrigin: receiver.origin,
      count: workspaceCount,
      seeds: S.seeds,
    });
    await pool.query('vacuum analyze');
    const postmaster = postmasterPid(server.dataDir);
    const cpus = os.cpus();
    out(`\nLeadwire soak (${new Date().toISOString()}): ${f1(S.minutes)} minutes in ${intervals} intervals of ${S.intervalSeconds} s`);
    out(`machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'cpu'}; node ${process.version}; server ROLE=all, LOG_LEVEL=warn`);
    if (busyBefore !== null) out(`before start: ${f2(busyBefore)} of ${cpus.length} cores busy with other work`);
    out(
      `mix per second: ${KINDS.map((k) => `${k} ${RATES[k]}`).join(', ')} (open loop); ${workspaceCount} workspaces in turn, ` +
        `about ${f1(deliveriesPerSec)} deliveries/s to an HTTPS receiver in this process`,
    );
    out(
      'warm-up: interval 1 (left out of the rules); p99 drift: the last third of the intervals against the first third; ' +
        'reference: /healthz in the same mix\n',
    );

    const db0 = await databaseMb(pool);
    const watcher = watch(server.origin, Math.min(SCRAPE_MS, (S.intervalSeconds * 1000) / 4));
    gc.take(); // the start-up's collections are not the load's
    const load = startSoakLoad({ origin: server.origin, workspaces, rates: RATES, seeds: S.seeds });
    const samples: Sample[] = [];
    const rows: unknown[] = [];
    const t0 = performance.now();
    let dbBefore = db0;
    let receivedBefore = 0;
    let meter = cpuMeter(server.pid, postmaster);
    for (let i = 1; i <= intervals; i++) {
      await sleepUntil(t0 + i * S.intervalSeconds * 1000);
      const kinds = load.take();
      const cpu = meter();
      meter = cpuMeter(server.pid, postmaster);
      const w = watcher.take();
      const g = gc.take();
      const heapAfterGcMb = Number.isFinite(g.heapAfterGcMb) ? g.heapAfterGcMb : w.heapLowMb;
      const dbMb = await databaseMb(pool);
      // The receiver keeps every request's bytes for the tests' sake; the soak counts ids only, and must not grow itself.
      receiver.requests.length = 0;
      const delivered = received.size - receivedBefore;
      receivedBefore = received.size;
      const ops = KINDS.reduce((n, k) => n + kinds[k].perSec, 0);
      const cost = cpuPerOp(cpu, ops);
      const atMinutes = (i * S.intervalSeconds) / 60;
      const backlog = w.outboxPending + w.jobsReady;
      samples.push({
        atMinutes,
        kinds: Object.fromEntries(KINDS.map((k) => [k, { count: kinds[k].count, errors: kinds[k].errors, p99Ms: kinds[k].p99Ms }])),
        heapAfterGcMb,
        rssMb: w.rssLowMb,
        backlog,
      });
      rows.push({ atMinutes, kinds, ...w, heapAfterGcMb, fullGcs: g.fullGcs, dbMb, delivered, cpu: cost });
      out(`minute ${f1(atMinutes)}${i === 1 ? ' (warm-up)' : ''}`);
      for (const k of KINDS) out(kindLine(k, kinds[k], kinds.healthz));
      out(
        `  server: RSS ${f1(w.rssMb)} MB (lowest ${f1(w.rssLowMb)}), heap used ${f1(w.heapLastMb)} MB (lowest ${f1(w.heapLowMb)} of ${w.scrapes} scrapes), ` +
          `after full GC ${f1(heapAfterGcMb)} MB (${g.fullGcs} this interval); ` +
          `database ${f1(dbMb)} MB (${dbMb >= dbBefore ? '+' : ''}${f1(dbMb - dbBefore)}); backlog ${f0(backlog)} ` +
          `(outbox ${f0(w.outboxPending)}, jobs ${f0(w.jobsReady)}); delivered ${f0(delivered)} (${f1(delivered / S.intervalSeconds)}/s)`,
      );
      out(
        cost
          ? `  cpu per operation (${f1(ops)} ops/s): server ${f2(cost.serverMs)} ms, PostgreSQL ${f2(cost.postgresMs)} ms; other processes ${f2(cost.otherCores)} cores`
          : '  cpu per operation: not measured (no /proc)',
      );
      dbBefore = dbMb;
    }
    log('load stopped; waiting for the deliveries it caused ...');
    await load.stop();
    watcher.stop();
    const caused = load.caused();
    const drainUntil = performance.now() + S.drainSeconds * 1000;
    while (received.size < caused && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 250));
    const lost = Math.max(0, caused - received.size);
    const verdict = judge(samples, lost, RULES);
    const dbEnd = await databaseMb(pool);

    out(`\nsummary over ${intervals} intervals (the first is the warm-up):`);
    for (const k of KINDS) {
      const p99s = samples.slice(1).map((s) => s.kinds[k]!.p99Ms);
      const ref = samples.slice(1).map((s) => s.kinds.healthz!.p99Ms);
      const ratios = p99s.map((p, i) => p / ref[i]!);
      out(
        `  ${k.padEnd(8)} p99 first ${f1(p99s[0] ?? Number.NaN)} ms, last ${f1(p99s.at(-1) ?? Number.NaN)} ms, worst ${f1(Math.max(...p99s))} ms; ` +
          `ratio to /healthz first ${f1(ratios[0] ?? Number.NaN)}x, last ${f1(ratios.at(-1) ?? Number.NaN)}x`,
      );
    }
    out(
      `  memory: RSS (lowest) ${f1(samples[0]?.rssMb ?? Number.NaN)} -> ${f1(samples.at(-1)?.rssMb ?? Number.NaN)} MB, heap after GC ` +
        `${f1(samples[0]?.heapAfterGcMb ?? Number.NaN)} -> ${f1(samples.at(-1)?.heapAfterGcMb ?? Number.NaN)} MB; database ${f1(db0)} -> ${f1(dbEnd)} MB ` +
        `(${f1((dbEnd - db0) / S.minutes)} MB/min)`,
    );
    out(`  deliveries: caused ${f0(caused)}, received ${f0(received.size)}, lost ${f0(lost)}, duplicated ${f0(duplicates)}`);
    for (const n of verdict.notes) out(`  note: ${n}`);
    out(verdict.pass ? '\nSOAK PASSED' : `\nSOAK FAILED:\n${verdict.failures.map((f) => `  - ${f}`).join('\n')}`);
    out(
      `SOAK_RESULT ${JSON.stringify({ settings: S, rates: RATES, workspaces: workspaceCount, busyBefore, rows, caused, received: received.size, lost, duplicates, verdict })}`,
    );
    exitCode = verdict.pass ? 0 : 1;
  } finally {
    log('stopping server and receiver ...');
    await stopEverything();
  }
  process.exitCode = exitCode;
}

/** What must be stopped however the bench ends, last started first: filled as things start, run once. */
const toStop: Array<() => Promise<unknown>> = [];
let stopped: Promise<void> | undefined;
function stopEverything(): Promise<void> {
  stopped ??= (async () => {
    for (const stop of toStop.reverse()) await stop().catch(() => {});
  })();
  return stopped;
}
const onSignal = (signal: NodeJS.Signals) => {
  log(`${signal}: stopping the server, its PostgreSQL and the receiver ...`);
  void stopEverything().finally(() => process.exit(130));
};
// Before anything starts, so that no moment leaves the server running without the bench.
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

main().catch((err: unknown) => {
  process.stderr.write(`bench:soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  void stopEverything().finally(() => process.exit(1));
});
