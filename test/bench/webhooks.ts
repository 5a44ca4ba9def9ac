/**
 * `npm run bench:webhooks`: contact upserts through the real outbox and job queue to a local HTTPS receiver that
 * verifies every signature, on this machine, in one run.
 *
 * Starts the real server (ROLE=all, WEBHOOKS_UNSAFE_ALLOW_LOOPBACK=true, the test CA trusted through
 * NODE_EXTRA_CA_CERTS) on a fresh embedded PostgreSQL, creates BENCH_WEBHOOK_ORGS workspaces, each with one endpoint
 * subscribed to `contact.created` (registered through POST /api/webhooks), then measures:
 *   1. the references: GET /healthz (HTTP stack) and, when pgbench is found, the one-statement upsert (database);
 *   2. paced: single upserts at BENCH_WEBHOOK_PACED_PER_SEC for BENCH_WEBHOOK_PACED_SECONDS, spread over the
 *      workspaces: the time from each upsert's response to the first attempt of its delivery (p50, p99);
 *   3. burst: batch upserts of 100 new contacts (BENCH_WEBHOOK_EVENTS_PER_ORG per workspace, 10 calls at a time):
 *      deliveries per second from the first request to the last delivery, and the same latency under that backlog.
 * Every delivery is checked: its `X-Webhook-Signature` over the raw bytes, then counted by delivery id (`webhook-id`)
 * and by the spec's de-duplication key (event, timestamp, contact id): lost and duplicated deliveries are printed.
 * Workspaces stay under 1,000 deliveries per hour each, so the limit is not what is measured. It reports; it never
 * fails on timings.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { bootstrap } from '#core/accounts/service.ts';
import { openDb, openOrm } from '@leadwire/db';
import autocannon from 'autocannon';
import pg from 'pg';
import { startReceiver, TEST_CA_PATH } from '../support/receiver.ts';
import { cpuMeter, postmasterPid } from './cpu.ts';
import { findPgbench, runPgbench } from './pgbench.ts';
import { startServer } from './server.ts';
import { clusterUrl, postJson } from './setup.ts';

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

const S = {
  orgs: setting('BENCH_WEBHOOK_ORGS', 30),
  eventsPerOrg: Math.min(900, setting('BENCH_WEBHOOK_EVENTS_PER_ORG', 300)),
  pacedPerSec: setting('BENCH_WEBHOOK_PACED_PER_SEC', 50),
  pacedSeconds: setting('BENCH_WEBHOOK_PACED_SECONDS', 10),
  drainTimeoutSeconds: setting('BENCH_WEBHOOK_DRAIN_SECONDS', 120),
};
const GOALS = { deliveriesPerSec: 1000, p50Ms: 250, p99Ms: 1000 };

const log = (msg: string) => process.stderr.write(`${msg}\n`);

interface Org {
  orgId: string;
  publicKey: string;
  internalKey: string;
  secret: string;
}

/** What the receiver saw: first arrival per contact, attempts per delivery id, bad signatures. */
class Tally {
  readonly firstArrival = new Map<string, number>();
  readonly attemptsByDelivery = new Map<string, number>();
  readonly deliveriesByKey = new Map<string, Set<string>>();
  badSignatures = 0;
  received = 0;
  lastArrival = 0;

  record(contactId: string, deliveryId: string, dedupeKey: string, at: number): void {
    this.received++;
    this.lastArrival = Math.max(this.lastArrival, at);
    if (!this.firstArrival.has(contactId)) this.firstArrival.set(contactId, at);
    this.attemptsByDelivery.set(deliveryId, (this.attemptsByDelivery.get(deliveryId) ?? 0) + 1);
    const ids = this.deliveriesByKey.get(dedupeKey) ?? new Set<string>();
    ids.add(deliveryId);
    this.deliveriesByKey.set(dedupeKey, ids);
  }

  /** Deliveries that reached the receiver more than once (a retry after a success, or a second delivery of one event). */
  duplicates(): number {
    let n = 0;
    for (const count of this.attemptsByDelivery.values()) n += count - 1;
    for (const ids of this.deliveriesByKey.values()) n += ids.size - 1;
    return n;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function latencies(sent: Map<string, number>, tally: Tally): { p50: number; p99: number; max: number; lost: number } {
  const values: number[] = [];
  let lost = 0;
  for (const [contactId, respondedAt] of sent) {
    const arrived = tally.firstArrival.get(contactId);
    if (arrived === undefined) lost++;
    else values.push(arrived - respondedAt);
  }
  values.sort((a, b) => a - b);
  return { p50: percentile(values, 50), p99: percentile(values, 99), max: values.at(-1) ?? Number.NaN, lost };
}

/** Resolves once every contact in `sent` has arrived, or after the drain time-out (the rest count as lost). */
async function drain(sent: Map<string, number>, tally: Tally): Promise<void> {
  const deadline = Date.now() + S.drainTimeoutSeconds * 1000;
  while (Date.now() < deadline) {
    let missing = 0;
    for (const id of sent.keys()) if (!tally.firstArrival.has(id)) missing++;
    if (missing === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits }) : 'n/a');

async function main() {
  const pgbench = await findPgbench(log).catch((err: unknown) => {
    log(`pgbench unavailable (${err instanceof Error ? err.message : String(err)}); the database reference is skipped`);
    return null;
  });
  const tally = new Tally();
  const secretsByPath = new Map<string, string>();
  const receiver = await startReceiver({
    responder: (req, res) => {
      const at = performance.now();
      const secret = secretsByPath.get(req.url);
      const signature = String(req.headers['x-webhook-signature'] ?? '');
      const expected = secret ? createHmac('sha256', secret).update(req.rawBody).digest('hex') : '';
      if (!secret || signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) {
        tally.badSignatures++;
        res.writeHead(400).end('bad signature');
        return;
      }
      const payload = JSON.parse(req.rawBody.toString('utf8')) as { event: string; timestamp: string; data: { contact: { id: string } } };
      const contactId = payload.data.contact.id;
      tally.record(contactId, String(req.headers['webhook-id']), `${payload.event}|${payload.timestamp}|${contactId}`, at);
      res.writeHead(204).end();
    },
  });
  log(`receiver on ${receiver.origin}; starting server ...`);
  const server = await startServer({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: TEST_CA_PATH });
  const onSignal = () => void Promise.all([server.stop(), receiver.close()]).finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let pool: pg.Pool | undefined;
  try {
    const url = await clusterUrl(server.dataDir);
    pool = new pg.Pool({ connectionString: url, max: 2 });
    const meter = () => cpuMeter(server.pid, postmasterPid(server.dataDir));

    log(`creating ${S.orgs} workspaces with an endpoint each ...`);
    const orm = await openOrm(url, { pool: { min: 0, max: 2 } });
    const orgs: Org[] = [];
    try {
      const db = await openDb(orm);
      for (let i = 0; i < S.orgs; i++) {
        const o = await bootstrap(db, {
          name: `Bench ${i}`,
          ownerEmail: `bench-${i}-${Date.now()}@bench.example.com`,
          ownerPassword: `pw-${Math.random()}-${Date.now()}`,
          plan: 'max',
        });
        const path = `/hook/${i}`;
        const endpoint = await postJson<{ secret: string; enabled: boolean }>(`${server.origin}/api/webhooks`, o.internalKey, {
          url: `${receiver.origin}${path}`,
          events: ['contact.created'],
          description: 'bench receiver',
        });
        if (!endpoint.enabled) throw new Error('the bench endpoint was created disabled: is WEBHOOKS_UNSAFE_ALLOW_LOOPBACK set?');
        secretsByPath.set(path, endpoint.secret);
        orgs.push({ ...o, secret: endpoint.secret });
      }
    } finally {
      await orm.close(true);
    }

    log('reference: GET /healthz, 10 connections, 2s warm-up + 5s ...');
    await autocannon({ url: `${server.origin}/healthz`, connections: 10, duration: 2 });
    const healthz = (await autocannon({ url: `${server.origin}/healthz`, connections: 10, duration: 5 })).requests.average;
    let reference: { tps: number } | null = null;
    if (pgbench) {
      log('reference: pgbench one-statement upsert, 50 clients, 2s warm-up + 8s ...');
      reference = await runPgbench({ binary: pgbench, url, pool, clients: 50, warmupSeconds: 2, seconds: 8, seeds: 10_000, meter });
    }

    log(`paced: ${S.pacedPerSec} single upserts/s for ${S.pacedSeconds}s ...`);
    const pacedSent = new Map<string, number>();
    const pacedTotal = Math.round(S.pacedPerSec * S.pacedSeconds);
    const started = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let n = 0; n < pacedTotal; n++) {
      const due = started + (n * 1000) / S.pacedPerSec;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const org = orgs[n % orgs.length]!;
      inFlight.push(
        postJson<{ id: string }>(`${server.origin}/api/v1/contacts/upsert`, org.publicKey, {
          email: `paced-${n}@bench.example.com`,
          firstName: 'Paced',
        }).then((r) => {
          pacedSent.set(r.id, performance.now());
        }),
      );
    }
    await Promise.all(inFlight);
    await drain(pacedSent, tally);
    const paced = latencies(pacedSent, tally);

    log(`burst: ${S.orgs} x ${S.eventsPerOrg} new contacts by batch upserts of 100, 10 calls at a time ...`);
    const burstSent = new Map<string, number>();
    const calls: Array<{ org: Org; rows: Array<{ email: string; firstName: string }> }> = [];
    for (const [i, org] of orgs.entries()) {
      for (let start = 0; start < S.eventsPerOrg; start += 100) {
        const rows = Array.from({ length: Math.min(100, S.eventsPerOrg - start) }, (_, k) => ({
          email: `burst-${i}-${start + k}@bench.example.com`,
          firstName: 'Burst',
        }));
        calls.push({ org, rows });
      }
    }
    const receivedBefore = tally.received;
    const stopCpu = meter();
    const burstStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < calls.length) {
          const call = calls[next++]!;
          const out = await postJson<{ results: Array<{ ok: boolean; id?: string }> }>(
            `${server.origin}/api/v1/contacts/batch-upsert`,
            call.org.publicKey,
            { contacts: call.rows },
          );
          const at = performance.now();
          for (const r of out.results) if (r.ok && r.id) burstSent.set(r.id, at);
        }
      }),
    );
    await drain(burstSent, tally);
    const burstSeconds = (tally.lastArrival - burstStart) / 1000;
    const cpu = stopCpu();
    const burstDelivered = tally.received - receivedBefore;
    const deliveriesPerSec = burstDelivered / burstSeconds;
    const burst = latencies(burstSent, tally);
    const lost = paced.lost + burst.lost;
    const duplicated = tally.duplicates();

    const out = process.stdout;
    const ok = (met: boolean) => (met ? 'met' : 'MISSED');
    out.write(`\nLeadwire webhook benchmark (${new Date().toISOString()})\n`);
    out.write(`${S.orgs} workspaces, one HTTPS endpoint each on loopback (receiver verifies every signature in this process)\n`);
    out.write(`reference /healthz: ${fmt(healthz)} req/s (10 connections)\n`);
    if (reference) out.write(`reference pgbench: ${fmt(reference.tps)} upserts/s (50 clients)\n`);
    out.write(
      `paced (${S.pacedPerSec}/s single upserts, ${pacedTotal} deliveries): response -> first attempt p50 ${fmt(paced.p50, 1)} ms, p99 ${fmt(paced.p99, 1)} ms, max ${fmt(paced.max, 1)} ms\n`,
    );
    out.write(
      `burst (${burstSent.size} contacts by batch upsert): ${fmt(deliveriesPerSec)} deliveries/s over ${fmt(burstSeconds, 2)} s ` +
        `(${(deliveriesPerSec / healthz).toFixed(3)}x /healthz${reference ? `, ${(deliveriesPerSec / reference.tps).toFixed(3)}x pgbench` : ''}); ` +
        `latency under that backlog p50 ${fmt(burst.p50)} ms, p99 ${fmt(burst.p99)} ms\n`,
    );
    // The bench process (upserts and the receiver) is shown too: it must stay far from a whole core, or it is what is measured.
    if (cpu) {
      const per = (cores: number) => fmt((cores * 1000) / deliveriesPerSec, 3);
      out.write(
        `cpu per delivery in the burst: server ${per(cpu.server)} ms, PostgreSQL ${per(cpu.postgres)} ms, bench process (upserts + receiver) ${per(cpu.loadGenerator)} ms (${cpu.loadGenerator.toFixed(2)} cores); other processes ${cpu.other.toFixed(2)} cores\n`,
      );
    }
    out.write(`lost: ${lost}; duplicated: ${duplicated}; bad signatures: ${tally.badSignatures}\n`);
    out.write(`goal deliveries/s >= ${GOALS.deliveriesPerSec}: ${ok(deliveriesPerSec >= GOALS.deliveriesPerSec)}\n`);
    out.write(
      `goal p50 < ${GOALS.p50Ms} ms (paced): ${ok(paced.p50 < GOALS.p50Ms)}; p99 < ${GOALS.p99Ms} ms (paced): ${ok(paced.p99 < GOALS.p99Ms)}\n`,
    );
    out.write(`goal nothing lost: ${ok(lost === 0 && tally.badSignatures === 0)}\n`);
    out.write(
      `BENCH_RESULT ${JSON.stringify({ settings: S, healthz, pgbench: reference?.tps ?? null, paced, burst: { ...burst, deliveriesPerSec, seconds: burstSeconds, delivered: burstDelivered }, lost, duplicated, badSignatures: tally.badSignatures, cpu })}\n`,
    );
  } finally {
    await pool?.end();
    log('stopping server and receiver ...');
    await server.stop();
    await receiver.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
