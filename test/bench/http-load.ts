import autocannon, { type Result } from 'autocannon';
import type { CpuShare } from './cpu.ts';
import type { Workload } from './workload.ts';
import type { WriteProfile } from './write-profile.ts';

export interface HttpPhaseResult {
  name: string;
  connections: number;
  seconds: number;
  /** 2xx responses in the measured window. */
  ok: number;
  reqPerSec: number;
  /** Contacts saved per second (created plus updated rows) over the window. */
  contactsPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  status429: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  rows: { created: number; updated: number; failed: number };
  cpu: CpuShare | null;
  /** What PostgreSQL wrote in the measured window, when the phase was asked to profile it. */
  writes: WriteProfile | null;
  /** Requests answered in the measured window, whatever their status. */
  requests: number;
}

export interface HttpPhaseOptions {
  origin: string;
  keys: readonly string[];
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Starts a CPU measurement of the measured window; calling the result ends it. */
  meter: () => () => CpuShare | null;
  /** Starts a write profile of the measured window (write-profile.ts); calling the result ends it. */
  writes?: () => Promise<() => Promise<WriteProfile>>;
}

interface Driver {
  path: string;
  body(): string;
  tally(status: number, body: string, rows: HttpPhaseResult['rows']): void;
}

/**
 * One phase: a warm-up run (discarded) and then the measured run, over keep-alive connections. Each request takes the
 * next key in turn, so no key gets near its 600 per minute.
 */
async function runPhase(name: string, o: HttpPhaseOptions, d: Driver): Promise<HttpPhaseResult> {
  let next = 0;
  let rows = { created: 0, updated: 0, failed: 0 };
  const run = (seconds: number) =>
    autocannon({
      url: o.origin,
      connections: o.connections,
      duration: seconds,
      timeout: 30,
      requests: [
        {
          method: 'POST',
          path: d.path,
          setupRequest: (req) => {
            const key = o.keys[next++ % o.keys.length]!;
            req.headers = { ...req.headers, authorization: `Bearer ${key}`, 'content-type': 'application/json' };
            req.body = d.body();
            return req;
          },
          onResponse: (status, body) => d.tally(status, body, rows),
        },
      ],
    });
  if (o.warmupSeconds > 0) await run(o.warmupSeconds);
  rows = { created: 0, updated: 0, failed: 0 };
  const stopWrites = o.writes ? await o.writes() : null;
  const stopMeter = o.meter();
  const r: Result = await run(o.seconds);
  const cpu = stopMeter();
  const writes = stopWrites ? await stopWrites() : null;
  const seconds = (r.finish.getTime() - r.start.getTime()) / 1000;
  const ok = r['2xx'];
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, Number(s.count)]));
  return {
    name,
    connections: o.connections,
    seconds,
    ok,
    reqPerSec: ok / seconds,
    contactsPerSec: (rows.created + rows.updated) / seconds,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    non2xx: r.non2xx,
    status429: statusCodes['429'] ?? 0,
    statusCodes,
    errors: r.errors,
    timeouts: r.timeouts,
    rows,
    cpu,
    writes,
    requests: ok + r.non2xx,
  };
}

/** POST /api/v1/contacts/upsert, one contact per request. */
export function runSingleUpserts(o: HttpPhaseOptions, work: Workload): Promise<HttpPhaseResult> {
  return runPhase('upsert', o, {
    path: '/api/v1/contacts/upsert',
    body: () => JSON.stringify(work.row()),
    // A substring check keeps the load generator's own CPU cost per response negligible.
    tally: (status, body, rows) => {
      if (status !== 200) rows.failed++;
      else if (body.includes('"created":true')) rows.created++;
      else rows.updated++;
    },
  });
}

/** POST /api/v1/contacts/batch-upsert, `size` contacts per request. */
export function runBatchUpserts(o: HttpPhaseOptions, work: Workload, size: number): Promise<HttpPhaseResult> {
  return runPhase('batch-upsert', o, {
    path: '/api/v1/contacts/batch-upsert',
    body: () => JSON.stringify({ contacts: work.batch(size) }),
    tally: (status, body, rows) => {
      if (status !== 200) {
        rows.failed += size;
        return;
      }
      const r = JSON.parse(body) as { created: number; updated: number; failed: number };
      rows.created += r.created;
      rows.updated += r.updated;
      rows.failed += r.failed;
    },
  });
}
