/**
 * The soak's verdict, as pure functions over its per-interval samples (tested in soak-rules.test.ts, no clock, no
 * server): memory that grows without bound, p99 that drifts, a delivery backlog that keeps growing, deliveries lost.
 */

/** One kind's figures over one interval. */
export interface KindWindow {
  count: number;
  errors: number;
  p99Ms: number;
}

/** What the soak saw over one interval (a minute by default). */
export interface Sample {
  /** Minutes from the start of the load to the end of this interval. */
  atMinutes: number;
  kinds: Record<string, KindWindow>;
  /** The heap after the interval's full (mark-compact) collections, or after the last one before it. */
  heapAfterGcMb: number;
  /** The lowest RSS read in the interval. */
  rssMb: number;
  /** Events not yet dispatched plus delivery jobs due and not yet taken. */
  backlog: number;
}

export interface Rules {
  /** Intervals at the start left out of every rule (the JIT, pools and caches settle). */
  warmupIntervals: number;
  /**
   * A kind drifts when its p99 at the end (the median of the last third of the intervals' p99s) exceeds this multiple
   * of its p99 at the start (the median of the first third after the warm-up; the first interval alone for runs of
   * under six intervals)...
   */
  p99Factor: number;
  /**
   * ...taking the start's p99 as at least this, so a millisecond of noise on a 2 ms baseline is no drift. Medians,
   * because on a shared machine one minute can stall for seconds (a neighbour's build): such a minute at the start
   * must not blunt the rule, nor one at the end decide it. Minutes past the limit that did not move a median are
   * reported.
   */
  p99FloorMs: number;
  /** Memory and backlog growth are judged over at least this many minutes: a shorter run sees only the start-up climb. */
  growthMinutes: number;
  /** Growth (least-squares slope over the second half) allowed without a plateau, per minute. */
  heapMbPerMin: number;
  rssMbPerMin: number;
  backlogPerMin: number;
  /** The kinds that are references (printed, never judged). */
  references: readonly string[];
}

export const DEFAULT_RULES: Rules = {
  warmupIntervals: 1,
  growthMinutes: 10,
  p99Factor: 2,
  p99FloorMs: 10,
  heapMbPerMin: 1,
  rssMbPerMin: 3,
  backlogPerMin: 60,
  references: ['healthz'],
};

export interface Verdict {
  pass: boolean;
  /** Why it failed, one line each. */
  failures: string[];
  /** What was not judged or only warned about. */
  notes: string[];
}

/** Least-squares slope of y over x; 0 for fewer than two points. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return 0;
  const mx = xs.slice(0, n).reduce((a, b) => a + b, 0) / n;
  const my = ys.slice(0, n).reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** The value at percentile p (0-100) of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface Growth {
  /** Per minute, over the second half of the judged intervals. */
  perMin: number;
  /** The last third set no new high beyond the tolerance: the series has levelled off. */
  plateau: boolean;
  unbounded: boolean;
}

/**
 * Growth without bound: the second half's slope is above `limitPerMin` AND the last third of the series still sets
 * new highs (above the earlier maximum by more than `tolerance`). A series that climbed and then levelled off (a cache
 * filling, the JIT's code space) passes however steep its climb; one that keeps climbing slowly fails. Null when
 * there are too few points (under 4) to tell a trend from noise.
 */
export function growth(xs: readonly number[], ys: readonly number[], limitPerMin: number, tolerance: number): Growth | null {
  const n = Math.min(xs.length, ys.length);
  if (n < 4) return null;
  const half = Math.floor(n / 2);
  const perMin = slope(xs.slice(half, n), ys.slice(half, n));
  const third = Math.max(1, Math.floor(n / 3));
  const before = Math.max(...ys.slice(0, n - third));
  const last = Math.max(...ys.slice(n - third, n));
  const plateau = last <= before + tolerance;
  return { perMin, plateau, unbounded: perMin > limitPerMin && !plateau };
}

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((x, y) => x - y);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
}

/** The first and the last third of the judged intervals in which `kind` ran (one each at least, never overlapping). */
function thirds(judged: readonly Sample[], kind: string): { head: Sample[]; tail: Sample[] } | null {
  const ran = judged.filter((s) => (s.kinds[kind]?.count ?? 0) > 0);
  if (ran.length < 2) return null;
  const third = Math.max(1, Math.floor(ran.length / 3));
  return { head: ran.slice(0, third), tail: ran.slice(ran.length - third) };
}

const p99Of = (samples: readonly Sample[], kind: string) => median(samples.map((s) => s.kinds[kind]?.p99Ms ?? Number.NaN));

/** The kind's p99 at the start, and the p99 above which it counts as drifted. */
function baseline(
  judged: readonly Sample[],
  kind: string,
  r: Rules,
): { head: Sample[]; tail: Sample[]; p99Ms: number; limit: number } | null {
  const t = thirds(judged, kind);
  if (!t) return null;
  const p99Ms = p99Of(t.head, kind);
  return { ...t, p99Ms, limit: r.p99Factor * Math.max(p99Ms, r.p99FloorMs) };
}

/** The kind's drift, described, when the median p99 of the last third is past the limit; null otherwise. */
function p99Drift(judged: readonly Sample[], kind: string, r: Rules): string | null {
  const base = baseline(judged, kind, r);
  if (!base) return null;
  const p99 = p99Of(base.tail, kind);
  if (!(p99 > base.limit)) return null;
  const ref = r.references[0];
  const refBase = ref ? baseline(judged, ref, r) : null;
  const refMoved = refBase ? p99Of(base.tail, ref!) / refBase.p99Ms : Number.NaN;
  return (
    `${kind}: p99 ${f1(p99)} ms at the end (median of the last ${base.tail.length} interval(s), to minute ` +
    `${f1(base.tail.at(-1)!.atMinutes)}), past ${r.p99Factor}x the start's ${f1(base.p99Ms)} ms (median of the first ` +
    `${base.head.length} after the warm-up, taken as at least ${r.p99FloorMs} ms)` +
    (Number.isFinite(refMoved) ? `; the reference ${ref}'s p99 moved ${f2(refMoved)}x over the same intervals` : '')
  );
}

/** The verdict over every interval of a run, plus the deliveries lost once the load stopped and the backlog drained. */
export function judge(samples: readonly Sample[], lostDeliveries: number, r: Rules = DEFAULT_RULES): Verdict {
  const failures: string[] = [];
  const notes: string[] = [];
  const judged = samples.slice(r.warmupIntervals);
  const kinds = [...new Set(samples.flatMap((s) => Object.keys(s.kinds)))].filter((k) => !r.references.includes(k));

  if (judged.length < 2) notes.push(`p99 drift not judged: ${judged.length} interval(s) after the warm-up, 2 needed`);
  else {
    for (const kind of kinds) {
      const drift = p99Drift(judged, kind, r);
      if (drift) {
        failures.push(drift);
        continue;
      }
      // Intervals past the limit that did not move the median are reported: on a shared machine, a neighbour's burst.
      const base = baseline(judged, kind, r);
      const spikes = base ? judged.filter((s) => !base.head.includes(s) && (s.kinds[kind]?.p99Ms ?? 0) > base.limit).length : 0;
      if (spikes > 0)
        notes.push(`${kind}: ${spikes} interval(s) with p99 past ${f1(base!.limit)} ms, but not the last third's median: no drift`);
    }
  }

  const xs = judged.map((s) => s.atMinutes);
  const series: Array<[string, number[], number, number, string]> = [
    ['heap after GC', judged.map((s) => s.heapAfterGcMb), r.heapMbPerMin, 2, 'MB'],
    ['RSS', judged.map((s) => s.rssMb), r.rssMbPerMin, 4, 'MB'],
    ['delivery backlog', judged.map((s) => s.backlog), r.backlogPerMin, 50, 'items'],
  ];
  for (const [name, ys, limit, minTolerance, unit] of series) {
    // Noise scales with the value (a 150 MB RSS moves by megabytes), so the tolerance does too.
    const tolerance = Math.max(minTolerance, 0.02 * Math.max(0, ...ys));
    const span = (xs.at(-1) ?? 0) - (xs[0] ?? 0);
    const g = span >= r.growthMinutes ? growth(xs, ys, limit, tolerance) : null;
    if (!g)
      notes.push(
        `${name} growth not judged: ${ys.length} interval(s) over ${f1(span)} minutes after the warm-up; 4 over ${r.growthMinutes} needed`,
      );
    else if (g.unbounded) {
      failures.push(
        `${name} grows without bound: ${f1(g.perMin)} ${unit}/min over the second half (limit ${limit}), ` +
          `still setting new highs in the last third`,
      );
    } else if (g.perMin > limit) notes.push(`${name}: ${f1(g.perMin)} ${unit}/min over the second half, but levelled off`);
  }

  for (const kind of kinds) {
    const errors = judged.reduce((n, s) => n + (s.kinds[kind]?.errors ?? 0), 0);
    if (errors > 0) failures.push(`${kind}: ${errors} request(s) failed after the warm-up`);
  }
  if (lostDeliveries > 0) failures.push(`${lostDeliveries} delivery(ies) caused by the load never reached the receiver`);
  return { pass: failures.length === 0, failures, notes };
}
