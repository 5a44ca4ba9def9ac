import { Worker } from 'node:worker_threads';
import type { ProbeInput, ProbeOutput } from './probe-worker.ts';

export interface ProbeResult {
  /** Answered requests. */
  requests: number;
  /** Over the answered requests, 2xx or not. */
  p50: number;
  p99: number;
  max: number;
  /** Requests without a 2xx answer (another status, an error, a time-out). */
  failed: number;
  /**
   * The 99th percentile over every request sent, a failure counting as an unbounded wait (Infinity): what the client
   * lived through. It equals p99 when nothing failed, and is Infinity once 1% failed.
   */
  p99Strict: number;
  statuses: Record<string, number>;
}

function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs a well-behaved client (probe-worker.ts) for `durationMs` and summarises its latencies. */
export function probe(input: ProbeInput): Promise<ProbeResult> {
  const worker = new Worker(new URL('./probe-worker.ts', import.meta.url), { workerData: input });
  return new Promise<ProbeResult>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (out: ProbeOutput) => {
      const sorted = [...out.latencies].sort((a, b) => a - b);
      const sent = Object.values(out.statuses).reduce((a, b) => a + b, 0);
      const good = out.latencies.filter((_, i) => out.ok[i]).sort((a, b) => a - b);
      const failed = sent - good.length;
      resolve({
        requests: sorted.length,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        max: sorted.at(-1) ?? 0,
        failed,
        p99Strict: percentile([...good, ...Array<number>(failed).fill(Infinity)], 99),
        statuses: out.statuses,
      });
    });
  }).finally(() => worker.terminate());
}
