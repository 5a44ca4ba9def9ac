import type { CpuShare } from './cpu.ts';
import type { HttpPhaseResult } from './http-load.ts';
import type { RawPhaseResult } from './raw-sql.ts';

/** The targets on 2 cores. Printed beside the figures; a benchmark reports, it never fails a build. */
export const TARGETS = { upsertReqPerSec: 3000, upsertP99Ms: 50, upsertShareOfRaw: 0.4, batchContactsPerSec: 20_000 };

const f0 = (n: number) => Math.round(n).toLocaleString('en-US');
const f1 = (n: number) => n.toFixed(1);
const mark = (ok: boolean) => (ok ? 'met' : 'MISSED');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

/** CPU milliseconds one operation costs each consumer, and what all the machine's cores would sustain at that cost. */
export function cpuCost(c: CpuShare | null, opsPerSec: number) {
  if (!c || !opsPerSec) return null;
  const ms = (cores: number) => (cores / opsPerSec) * 1000;
  const total = ms(c.server + c.postgres + c.loadGenerator);
  return { serverMs: ms(c.server), postgresMs: ms(c.postgres), loadGeneratorMs: ms(c.loadGenerator), ceilingPerSec: total ? (c.cores * 1000) / total : 0 };
}

function cpuLines(name: string, unit: string, c: CpuShare | null, opsPerSec: number): string[] {
  const cost = cpuCost(c, opsPerSec);
  if (!c || !cost) return [`  ${name}: not measured (no /proc)`];
  const f2 = (n: number) => n.toFixed(2);
  return [
    `  ${name.padEnd(13)} cores busy ${f2(c.machine)} of ${c.cores}: server ${f2(c.server)}, postgres ${f2(c.postgres)}, ` +
      `load generator ${f2(c.loadGenerator)}, other processes ${f2(c.other)}`,
    `  ${''.padEnd(13)} CPU per ${unit}: server ${f2(cost.serverMs)} ms, postgres ${f2(cost.postgresMs)} ms, load generator ` +
      `${f2(cost.loadGeneratorMs)} ms => at most ~${f0(cost.ceilingPerSec)} ${unit}s/s with all ${c.cores} cores, lock waits aside`,
  ];
}

export function formatReport(r: { upsert: HttpPhaseResult; batch: HttpPhaseResult; raw: RawPhaseResult; batchSize: number }): string {
  const { upsert, batch, raw } = r;
  const ratio = raw.opsPerSec ? upsert.reqPerSec / raw.opsPerSec : 0;
  const lines = [
    table([
      ['phase', 'conns', 'seconds', 'req/s', 'contacts/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx', '429', 'errors'],
      ...[upsert, batch].map((p) => [
        `API ${p.name}`,
        String(p.connections),
        f1(p.seconds),
        f0(p.reqPerSec),
        f0(p.contactsPerSec),
        f1(p.latencyMs.p50),
        f1(p.latencyMs.p90),
        f1(p.latencyMs.p99),
        f1(p.latencyMs.max),
        String(p.non2xx),
        String(p.status429),
        String(p.errors + p.timeouts),
      ]),
      [
        'raw SQL upsert (pg)',
        String(raw.clients),
        f1(raw.seconds),
        f0(raw.opsPerSec),
        f0(raw.opsPerSec),
        f1(raw.latencyMs.p50),
        f1(raw.latencyMs.p90),
        f1(raw.latencyMs.p99),
        f1(raw.latencyMs.max),
        '-',
        '-',
        String(raw.errors),
      ],
    ]),
    '',
    `rows: upsert ${f0(upsert.rows.created)} created / ${f0(upsert.rows.updated)} updated / ${upsert.rows.failed} failed; ` +
      `batch ${f0(batch.rows.created)} created / ${f0(batch.rows.updated)} updated / ${batch.rows.failed} failed; ` +
      `raw ${f0(raw.created)} created / ${f0(raw.updated)} updated`,
    `status codes: upsert ${JSON.stringify(upsert.statusCodes)}, batch ${JSON.stringify(batch.statusCodes)}`,
    ...(raw.firstError ? [`raw SQL first error: ${raw.firstError}`] : []),
    '',
    'CPU in the measured window ("other processes" above ~0.1 cores means the machine was not quiet and the figures above',
    'are low; the CPU cost per operation is the steadier number):',
    ...cpuLines('upsert', 'request', upsert.cpu, upsert.reqPerSec),
    ...cpuLines('batch-upsert', 'contact', batch.cpu, batch.contactsPerSec),
    ...cpuLines('raw SQL', 'upsert', raw.cpu, raw.opsPerSec),
    '',
    'targets (2 cores):',
    `  upsert >= ${f0(TARGETS.upsertReqPerSec)} req/s: ${f0(upsert.reqPerSec)} ${mark(upsert.reqPerSec >= TARGETS.upsertReqPerSec)}`,
    `  upsert p99 <= ${TARGETS.upsertP99Ms} ms: ${f1(upsert.latencyMs.p99)} ${mark(upsert.latencyMs.p99 <= TARGETS.upsertP99Ms)}`,
    `  upsert >= ${TARGETS.upsertShareOfRaw * 100}% of raw SQL: ${(ratio * 100).toFixed(0)}% ${mark(ratio >= TARGETS.upsertShareOfRaw)}`,
    `  batch >= ${f0(TARGETS.batchContactsPerSec)} contacts/s (${r.batchSize} per call): ${f0(batch.contactsPerSec)} ${mark(batch.contactsPerSec >= TARGETS.batchContactsPerSec)}`,
  ];
  return lines.join('\n');
}
