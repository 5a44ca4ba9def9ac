import { generateKeyValue, hashKey } from '#core/auth/key-material.ts';
import { PUBLIC_API_PER_MINUTE } from '#core/limits/plans.ts';
import autocannon, { type Result } from 'autocannon';
import type pg from 'pg';
import type { CpuShare } from './cpu.ts';
import { probe, type ProbeResult } from './probe.ts';
import { seedEmail } from './workload.ts';

/** Distinct unknown keys in the flood, as the issue measured it. */
export const FLOOD_KEYS = 5_000;
/**
 * The well-behaved tenant: 4 keys at 8 requests a second each (480 a minute, under the 600 limit across the three
 * probe phases of one minute), so the p99 rests on a few hundred samples per phase.
 */
const PROBE = { keys: 4, perKeyPerSec: 8 };

export interface LoadFigures {
  reqPerSec: number;
  p50: number;
  p99: number;
  statusCodes: Record<string, number>;
  errors: number;
}

export interface LimitsResult {
  connections: number;
  seconds: number;
  healthz: LoadFigures & { cpu: CpuShare | null };
  idle: ProbeResult;
  abuse: { load: LoadFigures; cpu: CpuShare | null; refusedPerSec: number; probe: ProbeResult };
  flood: {
    load: LoadFigures;
    requests: number;
    keyLookups: number;
    /**
     * Look-ups the server's memory allows: each distinct unknown key once while it is remembered as not found (10
     * minutes, 10,000 keys), which the warm-up already spent; the measured run should need next to none.
     */
    allowance: number;
    probeLookups: number;
    probe: ProbeResult;
  };
  /**
   * A new made-up key on every request: nothing to remember, so one look-up each, but at most KEY_LOOKUP_CONCURRENCY
   * of them at once; the flood's own latency is what a real key the server has not seen yet waits in that queue.
   */
  freshFlood: { load: LoadFigures; requests: number; keyLookups: number; probe: ProbeResult };
}

export function figures(r: Result): LoadFigures {
  const seconds = (r.finish.getTime() - r.start.getTime()) / 1000;
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, Number(s.count)]));
  const answered = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return { reqPerSec: answered / seconds, p50: r.latency.p50, p99: r.latency.p99, statusCodes, errors: r.errors + r.timeouts };
}

/** Sets the key's per-minute counter to its limit for the current minute and the next two. */
export async function spendKey(pool: pg.Pool, key: string): Promise<void> {
  await pool.query(
    `insert into rate_limit_counters (bucket, window_start, count)
     select 'key:' || k.id, date_trunc('minute', now()) + m * interval '1 minute', $2
     from api_keys k, generate_series(0, 2) m where k.key_hash = $1
     on conflict (bucket, window_start) do update set count = excluded.count`,
    [hashKey(key), PUBLIC_API_PER_MINUTE],
  );
}

/** Look-ups of a key by its hash since the statistics were reset: the authentication statement's index scans. */
export async function keyLookups(pool: pg.Pool): Promise<number> {
  // Backends report their counts when idle for a moment; give them that moment.
  await new Promise((r) => setTimeout(r, 1500));
  await pool.query('select pg_stat_clear_snapshot()');
  const { rows } = await pool.query<{ n: string }>(
    `select idx_scan as n from pg_stat_user_indexes where indexrelname = 'api_keys_key_hash_unique'`,
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * The rate limits under abuse, in four steps on one server: `/healthz` as the HTTP reference; the well-behaved tenant
 * alone; the same tenant while one key over its limit is hammered by `connections`; and while unknown keys flood in
 * (from one address, which no longer matters: unknown keys are remembered by hash, whoever sends them). The abused key's 429s per second are compared with `/healthz`'s requests per second.
 */
export async function runLimitPhases(o: {
  origin: string;
  pool: pg.Pool;
  abusedKey: string;
  goodKeys: readonly string[];
  connections: number;
  warmupSeconds: number;
  seconds: number;
  seedCount: number;
  log: (msg: string) => void;
  meter: () => () => CpuShare | null;
}): Promise<LimitsResult> {
  const bodies = Array.from({ length: 64 }, (_, i) =>
    JSON.stringify({
      email: seedEmail(Math.floor(Math.random() * o.seedCount)),
      firstName: 'Ada',
      tags: ['probe'],
      custom: { n: String(i) },
    }),
  );
  const keys = o.goodKeys.slice(0, PROBE.keys);
  const requests = bodies.map((body, i) => ({ headers: { authorization: `Bearer ${keys[i % keys.length]!}` }, body }));
  const runProbe = () =>
    probe({
      origin: o.origin,
      path: '/api/v1/contacts/upsert',
      requests,
      perSec: PROBE.perKeyPerSec * keys.length,
      durationMs: o.seconds * 1000,
    });
  const load = async (opts: Omit<Parameters<typeof autocannon>[0], 'url' | 'connections'>, seconds: number) =>
    figures(await autocannon({ url: o.origin, connections: o.connections, timeout: 30, ...opts, duration: seconds }));

  o.log(`limits 1/5: the well-behaved tenant alone (${PROBE.keys} keys x ${PROBE.perKeyPerSec} upserts/s), ${o.seconds}s ...`);
  const idle = await runProbe();

  // Right before the abuse, so that both rates meet the machine in the same state.
  o.log(`limits 2/5: GET /healthz, ${o.connections} connections, ${o.seconds}s ...`);
  await load({ requests: [{ method: 'GET', path: '/healthz' }] }, o.warmupSeconds);
  const healthzMeter = o.meter();
  const healthz = { ...(await load({ requests: [{ method: 'GET', path: '/healthz' }] }, o.seconds)), cpu: healthzMeter() };

  o.log(`limits 3/5: one key over its 600/min hammered by ${o.connections} connections, with the tenant beside it ...`);
  const abusive = {
    requests: [
      {
        method: 'POST',
        path: '/api/v1/contacts/upsert',
        headers: { authorization: `Bearer ${o.abusedKey}`, 'content-type': 'application/json' },
        body: bodies[0]!,
      },
    ],
  };
  // The key starts over its limit in this minute and the next two, so every measured request is one to refuse, however
  // slowly the machine serves the first 600 and wherever the minute boundary falls.
  await spendKey(o.pool, o.abusedKey);
  await load(abusive, o.warmupSeconds);
  const abuseMeter = o.meter();
  const [abuseLoad, abuseProbe] = await Promise.all([load(abusive, o.seconds), runProbe()]);
  const abuseCpu = abuseMeter();

  o.log(
    `limits 4/5: ${FLOOD_KEYS.toLocaleString('en-US')} unknown keys from one address, ${o.connections} connections, with the tenant beside it ...`,
  );
  const unknown = Array.from({ length: FLOOD_KEYS }, () => generateKeyValue());
  let next = 0;
  const flooding = {
    requests: [
      {
        method: 'POST',
        path: '/api/v1/contacts/upsert',
        headers: { 'content-type': 'application/json' },
        body: bodies[0]!,
        setupRequest: (req: { headers: Record<string, string> }) => ({
          ...req,
          headers: { ...req.headers, authorization: `Bearer ${unknown[next++ % unknown.length]}` },
        }),
      },
    ],
  };
  await load(flooding, o.warmupSeconds);
  const before = await keyLookups(o.pool);
  const [floodLoad, floodProbe] = await Promise.all([load(flooding, o.seconds), runProbe()]);
  const after = await keyLookups(o.pool);
  const floodRequests = Object.values(floodLoad.statusCodes).reduce((a, b) => a + b, 0);

  o.log(`limits 5/5: a new unknown key on every request, ${o.connections} connections, with the tenant beside it ...`);
  const freshFlooding = {
    requests: [
      {
        ...flooding.requests[0]!,
        setupRequest: (req: { headers: Record<string, string> }) => ({
          ...req,
          headers: { ...req.headers, authorization: `Bearer ${generateKeyValue()}` },
        }),
      },
    ],
  };
  const beforeFresh = await keyLookups(o.pool);
  const [freshLoad, freshProbe] = await Promise.all([load(freshFlooding, o.seconds), runProbe()]);
  const afterFresh = await keyLookups(o.pool);

  return {
    connections: o.connections,
    seconds: o.seconds,
    healthz,
    idle,
    abuse: {
      load: abuseLoad,
      cpu: abuseCpu,
      refusedPerSec:
        ((abuseLoad.statusCodes['429'] ?? 0) /
          Math.max(
            1,
            Object.values(abuseLoad.statusCodes).reduce((a, b) => a + b, 0),
          )) *
        abuseLoad.reqPerSec,
      probe: abuseProbe,
    },
    flood: {
      load: floodLoad,
      requests: floodRequests,
      // The tenant's own requests look their keys up too; what is left is the flood's.
      keyLookups: Math.max(0, after - before - floodProbe.requests),
      allowance: FLOOD_KEYS,
      probeLookups: floodProbe.requests,
      probe: floodProbe,
    },
    freshFlood: {
      load: freshLoad,
      requests: Object.values(freshLoad.statusCodes).reduce((a, b) => a + b, 0),
      keyLookups: Math.max(0, afterFresh - beforeFresh - freshProbe.requests),
      probe: freshProbe,
    },
  };
}
