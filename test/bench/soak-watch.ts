import type pg from 'pg';
import type { CpuShare } from './cpu.ts';

/** The server's own figures, read from its GET /metrics (prom-client's default collectors and Leadwire's gauges). */
export interface Scrape {
  rssMb: number;
  heapUsedMb: number;
  outboxPending: number;
  /** pg-boss jobs due and not yet taken, every queue together (the deliveries' among them). */
  jobsReady: number;
}

const MB = 2 ** 20;

/** The value of an unlabelled metric, or the sum over a labelled one's series; NaN when absent. */
export function metricValue(text: string, name: string): number {
  let sum = Number.NaN;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum = (Number.isNaN(sum) ? 0 : sum) + value;
  }
  return sum;
}

export async function scrape(origin: string): Promise<Scrape> {
  const res = await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}: ${text.slice(0, 200)}`);
  return {
    rssMb: metricValue(text, 'process_resident_memory_bytes') / MB,
    heapUsedMb: metricValue(text, 'nodejs_heap_size_used_bytes') / MB,
    outboxPending: metricValue(text, 'leadwire_outbox_pending'),
    jobsReady: metricValue(text, 'leadwire_queue_ready_jobs'),
  };
}

/** What the watcher saw over one interval. */
export interface Watched {
  /** The lowest heap used among the interval's scrapes (the fallback when no --trace-gc line was seen). */
  heapLowMb: number;
  heapLastMb: number;
  rssMb: number;
  /** The lowest RSS among the scrapes: it swings by a collection's worth with the moment read, its floor does not. */
  rssLowMb: number;
  outboxPending: number;
  jobsReady: number;
  scrapes: number;
}

/**
 * Scrapes /metrics every `everyMs` so an interval has a dozen readings: the heap used swings between collections, and
 * its lowest reading is the nearest a scrape gets to what survives them.
 */
export function watch(origin: string, everyMs: number): { take(): Watched; stop(): void } {
  let heapFloor = Number.POSITIVE_INFINITY;
  let rssFloor = Number.POSITIVE_INFINITY;
  let last: Scrape | null = null;
  let scrapes = 0;
  let busy = false;
  const read = async () => {
    if (busy) return;
    busy = true;
    try {
      last = await scrape(origin);
      heapFloor = Math.min(heapFloor, last.heapUsedMb);
      rssFloor = Math.min(rssFloor, last.rssMb);
      scrapes++;
    } catch {
      // A missed scrape leaves the interval with fewer readings; the interval's line shows how many it had.
    } finally {
      busy = false;
    }
  };
  void read();
  const timer = setInterval(() => void read(), everyMs);
  return {
    take() {
      const s = last ?? { rssMb: Number.NaN, heapUsedMb: Number.NaN, outboxPending: Number.NaN, jobsReady: Number.NaN };
      const out = {
        heapLowMb: Number.isFinite(heapFloor) ? heapFloor : Number.NaN,
        heapLastMb: s.heapUsedMb,
        rssMb: s.rssMb,
        rssLowMb: Number.isFinite(rssFloor) ? rssFloor : Number.NaN,
        outboxPending: s.outboxPending,
        jobsReady: s.jobsReady,
        scrapes,
      };
      heapFloor = Number.POSITIVE_INFINITY;
      rssFloor = Number.POSITIVE_INFINITY;
      scrapes = 0;
      return out;
    },
    stop: () => clearInterval(timer),
  };
}

/** The bench database's size on disk, in MB. */
export async function databaseMb(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>('select pg_database_size(current_database())::text as bytes');
  return Number(rows[0]?.bytes ?? Number.NaN) / MB;
}

/** CPU milliseconds per operation of the mix, by consumer, over an interval. */
export function cpuPerOp(cpu: CpuShare | null, opsPerSec: number): { serverMs: number; postgresMs: number; otherCores: number } | null {
  if (!cpu || opsPerSec <= 0) return null;
  return { serverMs: (cpu.server * 1000) / opsPerSec, postgresMs: (cpu.postgres * 1000) / opsPerSec, otherCores: cpu.other };
}

/** V8's --trace-gc line for a full collection: `Mark-Compact 120.5 (130.2) -> 80.1 (125.0) MB, ...`. */
const MARK_COMPACT = /Mark-Compact(?: \([\w ]+\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \(/;
/** Every --trace-gc line starts with `[pid:isolate]   <ms> ms: `. */
const GC_TRACE = /^\[\d+:0x[0-9a-f]+\]\s+\d+ ms: /;

/** The heap in MB after the full collection a --trace-gc line reports; null for any other line. */
export function heapAfterMarkCompact(line: string): number | null {
  const m = MARK_COMPACT.exec(line);
  return m ? Number(m[1]) : null;
}

/**
 * The server's heap after each full collection, read from its --trace-gc lines (the scavenges' are not printed, with
 * --trace-gc-ignore-scavenger): the live heap exactly, which a leak raises and garbage does not. An interval's figure
 * is what its last full collection left; an interval without one keeps the previous figure.
 */
export function gcTracker(): { onLine(line: string): boolean; take(): { heapAfterGcMb: number; fullGcs: number } } {
  let latest = Number.NaN;
  let previous = Number.NaN;
  let fullGcs = 0;
  return {
    onLine(line) {
      if (!GC_TRACE.test(line)) return false;
      const mb = heapAfterMarkCompact(line);
      if (mb !== null) {
        latest = mb;
        fullGcs++;
      }
      return true;
    },
    take() {
      const heapAfterGcMb = fullGcs > 0 ? latest : previous;
      const out = { heapAfterGcMb, fullGcs };
      previous = heapAfterGcMb;
      fullGcs = 0;
      return out;
    },
  };
}
