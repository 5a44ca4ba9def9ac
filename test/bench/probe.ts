import { Worker } from 'node:worker_threads';
import type { ProbeInput, ProbeOutput } from './probe-worker.ts';

export interface ProbeResult {
  requests: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
}

function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs the well-behaved tenant (probe-worker.ts) for `durationMs` and summarises its latencies. */
export function probe(input: ProbeInput): Promise<ProbeResult> {
  const worker = new Worker(new URL('./probe-worker.ts', import.meta.url), { workerData: input });
  return new Promise<ProbeResult>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (out: ProbeOutput) => {
      const sorted = [...out.latencies].sort((a, b) => a - b);
      resolve({ requests: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0, statuses: out.statuses });
    });
  }).finally(() => worker.terminate());
}
