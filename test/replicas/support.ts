/** Which server answered a test's reads, from the app's own metrics (test/replicas/standby.test.ts). */
import { expect } from 'vitest';
import { sampleValue, scrapeMetrics } from '../ops/prom-text.ts';

export type Counts = Record<'replica' | 'primary' | 'down' | 'lagging' | 'not_replayed' | 'read_failed', number>;

/** The helpers over the server at `origin()`: its replica-safe reads by pool and its fallbacks by reason. */
export function readsOf(origin: () => string) {
  async function counts(): Promise<Counts> {
    const { samples } = await scrapeMetrics(origin());
    const reads = (pool: string) => sampleValue(samples, 'leadwire_db_replica_safe_reads_total', { pool });
    const fallback = (reason: string) => sampleValue(samples, 'leadwire_db_replica_fallbacks_total', { reason });
    return {
      replica: reads('replica1'),
      primary: reads('primary'),
      down: fallback('down'),
      lagging: fallback('lagging'),
      not_replayed: fallback('not_replayed'),
      read_failed: fallback('read_failed'),
    };
  }

  /** Runs `fn` and returns what it returned with the reads it made, by who answered them. */
  async function served<T>(fn: () => Promise<T>): Promise<{ value: T; delta: Counts }> {
    const before = await counts();
    const value = await fn();
    const after = await counts();
    const delta = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k as keyof Counts]])) as Counts;
    return { value, delta };
  }

  /**
   * Repeats `read` until `ok` holds of its counts: waits on the change the replica set's probes will see (they run
   * every DATABASE_REPLICA_CHECK_MS), bounded only against a hang.
   */
  async function until(what: string, read: () => Promise<{ status: number }>, ok: (d: Counts) => boolean): Promise<void> {
    for (const deadline = Date.now() + 60_000; ; ) {
      const { value, delta } = await served(read);
      expect(value.status).toBe(200);
      if (ok(delta)) return;
      if (Date.now() > deadline) throw new Error(`never: ${what} (last read ${JSON.stringify(delta)})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  return { counts, served, until };
}
