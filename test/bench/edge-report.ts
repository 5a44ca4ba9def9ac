import type { EdgeResult } from './edge-run.ts';
import type { Tenant } from './edge-steps.ts';
import type { ProbeResult } from './probe.ts';
import { cpuCost, GOALS, type Goal } from './report.ts';

const f0 = (n: number) => Math.round(n).toLocaleString('en-US');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'unbounded');
const f2 = (n: number) => n.toFixed(2);

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

const mix = (s: Record<string, number>) =>
  Object.entries(s)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k}: ${f0(n)}`)
    .join(', ') || '-';

/**
 * The tenant's p99 over its upserts, a failed request counting as unbounded, against its idle value; NaN when the idle
 * value itself was unbounded (a machine too busy to measure on).
 */
function growth(idle: Tenant, beside: Tenant): number {
  if (!Number.isFinite(idle.upserts.p99Strict)) return Number.NaN;
  return beside.upserts.p99Strict / (idle.upserts.p99Strict || 1);
}

const times = (g: number) => (Number.isNaN(g) ? 'not measured (idle unbounded)' : Number.isFinite(g) ? `${f2(g)}x` : 'unbounded');
const p50 = (p: ProbeResult) => (p.requests ? f1(p.p50) : '-');

const failures = (p: ProbeResult) =>
  p.failed ? `, ${f0(p.failed)} failed (${mix(Object.fromEntries(Object.entries(p.statuses).filter(([k]) => !k.startsWith('2'))))})` : '';

/** One goal per step: the well-behaved tenant's upsert p99 at most twice its idle value, no request failed. */
export function edgeGoals(r: EdgeResult): Goal[] {
  return r.steps.map((s) => {
    const g = growth(r.idle, s.tenant);
    return {
      goal: `well-behaved p99 beside ${s.name} <= ${GOALS.probeP99Growth}x idle`,
      value: `${times(g)} (${f1(s.tenant.upserts.p99Strict)} vs ${f1(r.idle.upserts.p99Strict)} ms${failures(s.tenant.upserts)})`,
      met: g <= GOALS.probeP99Growth,
    };
  });
}

export function formatEdge(r: EdgeResult): string {
  const t = r.tenant;
  const extra = Object.entries(r.server.extra).map(([k, v]) => `${k}=${v}`);
  const lines = [
    `edge: the well-behaved tenant beside each abuse of the HTTP edge (own server; ${r.settings.seconds}s measured per step)`,
    `  tenant, from ${t.from}: ${t.upsertsPerSec} upserts/s over ${t.keys} keys (every ${t.idempotencyEvery}th with a new Idempotency-Key, ` +
      `replayed once), a sign-in every ${1 / t.signInsPerSec}s; a new connection per request`,
    `  server: HTTP_MAX_CONNECTIONS=${r.server.maxConnections}, PASSWORD_HASH_COST=${r.server.passwordHashCost} (the default cost: the floods are ` +
      `about what it costs), TRUST_PROXY=${r.server.trustProxy}${extra.length ? `; from the environment: ${extra.join(' ')}` : ''}`,
    `  floods: ${r.settings.floodConnections} requests in flight (sign-up, sign-in), ${r.settings.loadConnections} autocannon connections ` +
      `(unknown keys, spent key); slow connections: ${f0(r.settings.slowSockets)}`,
    '',
  ];
  const rows = [
    ['step', 'tenant p50', 'tenant p99', 'x idle', 'failed', 'sign-in p50/p99', 'abuse req/s', 'server CPU', 'server RSS peak'],
  ];
  const tenantRow = (name: string, x: Tenant, ratio: string, rate: string, cpu: string, rss: number | null) => [
    name,
    p50(x.upserts),
    f1(x.upserts.p99Strict),
    ratio,
    f0(x.upserts.failed),
    `${p50(x.signIns)}/${f1(x.signIns.p99Strict)}`,
    rate,
    cpu,
    rss === null ? '-' : `${f0(rss)} MB`,
  ];
  rows.push(tenantRow('tenant alone', r.idle, '1.00x', '-', '-', null));
  for (const s of r.steps) {
    const g = growth(r.idle, s.tenant);
    const cost = cpuCost(s.cpu, s.abuse.reqPerSec);
    rows.push(
      tenantRow(
        s.name,
        s.tenant,
        `${times(g)} ${g <= GOALS.probeP99Growth ? 'met' : 'MISSED'}`,
        `${f0(s.abuse.reqPerSec)}${s.abuse.slow ? ' conn/s' : ''}`,
        s.abuse.slow ? (s.cpu ? `${f2(s.cpu.server)} cores` : '-') : cost ? `${f2(cost.serverMs)} ms/req` : '-',
        s.serverRssPeakMb,
      ),
    );
  }
  if (r.idleAfter) rows.push(tenantRow('tenant alone, after', r.idleAfter, times(growth(r.idle, r.idleAfter)), '-', '-', null));
  lines.push(
    table(rows),
    '',
    'milliseconds; "unbounded": 1% or more of the tenant\'s requests failed (a refused or reset connection, a non-2xx, no answer in 10 s);',
    "server CPU: milliseconds per abuse request (floods) or cores busy (slow connections), the tenant's own work included",
    '',
  );

  for (const s of r.steps) {
    const a = s.abuse;
    lines.push(`${s.name}: ${s.what}`);
    if (s.settled.ms > 1_000 || !s.settled.quiet) {
      lines.push(
        `  started after ${f1(s.settled.ms / 1000)} s waiting for the previous step's queued work${s.settled.quiet ? '' : ', which was still running'}`,
      );
    }
    if (a.slow) {
      const sl = a.slow;
      lines.push(
        `  held ${f0(sl.openAtEnd)} of ${f0(sl.target)} open at the window's end (peak ${f0(sl.peakOpen)}); ${f0(sl.opened)} connections opened in the window ` +
          `(replacing closed ones); closed by the server: ${mix(sl.closedByServer)}; failed to connect: ${f0(sl.connectFailed)}`,
      );
    } else {
      lines.push(
        `  ${f0(a.requests)} requests from ${a.from}, ${f0(a.reqPerSec)}/s` +
          `${a.p50 === null || !a.requests ? '' : `, p50 ${f1(a.p50)} ms, p99 ${f1(a.p99 ?? 0)} ms`}; status mix: ${mix(a.statuses)}`,
      );
    }
    if (a.keyLookups !== undefined) {
      lines.push(
        `  api_keys look-ups by hash: ${f0(a.keyLookups)} for ${f0(a.requests)} flood requests` +
          `${a.requests ? ` = ${(a.keyLookups / a.requests).toFixed(3)} per request` : ''} ` +
          "(pg_stat_user_indexes idx_scan, less the tenant's own)",
      );
    }
    const c = s.cpu;
    const cost = cpuCost(c, a.reqPerSec);
    if (c && cost) {
      lines.push(
        `  cores busy ${f2(c.machine)} of ${c.cores}: server ${f2(c.server)}, postgres ${f2(c.postgres)}, bench ${f2(c.loadGenerator)}, other processes ${f2(c.other)}; ` +
          `per ${a.slow ? 'connection opened' : 'abuse request'} (the tenant's work included): server ${f2(cost.serverMs)} ms, postgres ${f2(cost.postgresMs)} ms`,
      );
    }
    lines.push(
      `  PostgreSQL backends at the peak: ${s.db.peakBusy} busy, ${s.db.peakLockWaits} waiting for a lock (the server's pool holds ${r.server.poolMax})`,
    );
    const tn = s.tenant;
    lines.push(`  tenant: upserts ${mix(tn.upserts.statuses)}; sign-ins ${mix(tn.signIns.statuses)}`);
  }
  lines.push('', 'edge goals:');
  for (const g of edgeGoals(r)) lines.push(`  ${g.met ? 'met   ' : 'MISSED'}  ${g.goal}: ${g.value}`);
  return lines.join('\n');
}
