import { cpuCost } from './report.ts';
import type { OpResult, StatementFigure } from './scale-measure.ts';

/** Each figure of the seeded database at most this multiple of the empty database's, measured in the same run. */
export const GROWTH_GOAL = 1.5;
/**
 * A b-tree gains levels as its table grows (one when empty, three or four at ten million rows), and rows found by key
 * no longer share pages: a statement reads a few pages more per index it descends, and a root-to-leaf path plus a heap
 * page per row it looks up, without walking more rows. The buffers goal allows that much beside the ratio.
 */
export const SLACK_PAGES = 8;
export const SLACK_PAGES_PER_ROW = 4;

export interface ScaleGoal {
  goal: string;
  value: string;
  met: boolean;
}

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const ratio = (a: number, b: number) => (b > 0 ? a / b : a > 0 ? Number.POSITIVE_INFINITY : 1);
const x = (r: number) => (Number.isFinite(r) ? `${f2(r)}x` : 'inf');

/** CPU milliseconds one call costs the service process and PostgreSQL together. */
export function cpuPerCall(r: OpResult): number | null {
  const c = cpuCost(r.cpu, r.calls / (r.seconds || 1));
  return c ? c.serverMs + c.postgresMs : null;
}

/** A statement's buffers are bounded when within the goal of the empty database's, allowing deeper b-trees. */
function buffersMet(seeded: StatementFigure, empty: StatementFigure | undefined): boolean {
  // A statement the empty run did not reach (a branch taken only with history) is judged on its plan alone.
  if (!empty) return true;
  return seeded.buffers <= GROWTH_GOAL * empty.buffers + SLACK_PAGES + SLACK_PAGES_PER_ROW * seeded.rowsTouched;
}

/** Every goal: per operation its CPU and latency per call, per statement its plan (no walk of a growing table) and buffers. */
export function scaleGoals(empty: OpResult[], seeded: OpResult[], rowsLimit: number): ScaleGoal[] {
  const out: ScaleGoal[] = [];
  for (const s of seeded) {
    const e = empty.find((r) => r.name === s.name);
    if (!e) continue;
    const cs = cpuPerCall(s);
    const ce = cpuPerCall(e);
    if (cs !== null && ce !== null) {
      const r = ratio(cs / (s.itemsPerCall || 1), ce / (e.itemsPerCall || 1));
      out.push({
        goal: `${s.name}: CPU per item <= ${GROWTH_GOAL}x empty`,
        value: `${x(r)} (${f2(cs)} vs ${f2(ce)} ms per call)`,
        met: r <= GROWTH_GOAL,
      });
    }
    const lr = ratio(s.latencyMs.p50, e.latencyMs.p50);
    out.push({
      goal: `${s.name}: p50 latency <= ${GROWTH_GOAL}x empty`,
      value: `${x(lr)} (${f2(s.latencyMs.p50)} vs ${f2(e.latencyMs.p50)} ms)`,
      met: lr <= GROWTH_GOAL,
    });
    for (const st of s.statements) {
      const before = e.statements.find((b) => b.key === st.key);
      const plan = st.seqScans.length === 0 && st.rowsTouched < rowsLimit;
      out.push({
        goal: `${s.name}: ${st.key.slice(0, 90)}: buffers bounded, no walk of a growing table`,
        value:
          `${st.buffers} vs ${before?.buffers ?? '-'} buffers, ${st.rowsTouched} rows touched` +
          (st.seqScans.length ? `, seq scan of ${st.seqScans.join(', ')}` : ''),
        met: plan && buffersMet(st, before),
      });
    }
  }
  return out;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

export function formatScale(empty: OpResult[], seeded: OpResult[], rowsLimit: number): string {
  const rows = [
    ['operation', 'calls/s', 'seeded/empty', 'p50 ms', 'empty', 'p99 ms', 'empty', 'CPU ms/call', 'empty', 'ratio', 'items/call'],
  ];
  for (const s of seeded) {
    const e = empty.find((r) => r.name === s.name);
    if (!e) continue;
    const cs = cpuPerCall(s);
    const ce = cpuPerCall(e);
    const rate = (r: OpResult) => r.calls / (r.seconds || 1);
    rows.push([
      s.name,
      f1(rate(s)),
      x(ratio(rate(s), rate(e))),
      f2(s.latencyMs.p50),
      f2(e.latencyMs.p50),
      f2(s.latencyMs.p99),
      f2(e.latencyMs.p99),
      cs === null ? '-' : f2(cs),
      ce === null ? '-' : f2(ce),
      cs === null || ce === null ? '-' : x(ratio(cs / (s.itemsPerCall || 1), ce / (e.itemsPerCall || 1))),
      f1(s.itemsPerCall),
    ]);
  }
  const lines = [table(rows), '', 'statements (generic plans, EXPLAIN (ANALYZE, BUFFERS), median of three calls): seeded vs empty'];
  for (const s of seeded) {
    const e = empty.find((r) => r.name === s.name);
    lines.push(`  ${s.name}`);
    for (const st of s.statements) {
      const b = e?.statements.find((p) => p.key === st.key);
      lines.push(
        `    buffers ${String(st.buffers).padStart(6)} vs ${String(b?.buffers ?? '-').padStart(6)} (${b ? x(ratio(st.buffers, b.buffers)) : 'new'}), ` +
          `rows touched ${String(st.rowsTouched).padStart(6)}, ${f2(st.executionMs)} vs ${b ? f2(b.executionMs) : '-'} ms` +
          `${st.seqScans.length ? `, SEQ SCAN ${st.seqScans.join(', ')}` : ''}: ${st.key.slice(0, 110)}`,
      );
    }
  }
  const cpuNote = seeded
    .map((s) => s.cpu)
    .filter((c) => c !== null)
    .map((c) => c.other);
  if (cpuNote.length) lines.push('', `other processes busy during the seeded measures: up to ${f2(Math.max(...cpuNote))} cores`);
  lines.push('', 'goals:');
  for (const g of scaleGoals(empty, seeded, rowsLimit)) lines.push(`  ${g.met ? 'met   ' : 'MISSED'}  ${g.goal}: ${g.value}`);
  return lines.join('\n');
}
