import type pg from 'pg';

export interface IdleResult {
  quietSeconds: number;
  seconds: number;
  commits: number;
  commitsPerSec: number;
  /** The statements PostgreSQL ran most often over the window (pg_stat_activity sampled), to say who keeps it awake. */
  busiest: { query: string; seen: number }[];
}

const SAMPLE_MS = 100;

/**
 * What an idle server costs its database: after `quietSeconds` with no traffic, the transactions committed in the
 * database over `seconds` (pg_stat_database, which backends flush at least every 10 s when idle, hence a window of
 * tens of seconds), per second. The window's own statements are taken out. Other backends' statements are sampled
 * from pg_stat_activity meanwhile, so a non-zero figure names its cause.
 */
export async function measureIdle(pool: pg.Pool, quietSeconds: number, seconds: number): Promise<IdleResult> {
  await new Promise((r) => setTimeout(r, quietSeconds * 1000));
  const commits = async () => {
    const { rows } = await pool.query<{ n: string }>(
      'select xact_commit::text as n from pg_stat_database where datname = current_database()',
    );
    return Number(rows[0]?.n ?? 0);
  };
  const seen = new Map<string, number>();
  const before = await commits();
  const started = performance.now();
  const until = started + seconds * 1000;
  let samples = 0;
  while (performance.now() < until) {
    const { rows } = await pool.query<{ query: string }>(
      `select left(regexp_replace(query, '\\s+', ' ', 'g'), 120) as query from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and state = 'active'`,
    );
    samples++;
    for (const r of rows) seen.set(r.query, (seen.get(r.query) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
  }
  // Backends flush their counters at the end of a transaction at most once a second, and within 10 s when idle.
  await new Promise((r) => setTimeout(r, 11_000));
  const after = await commits();
  const elapsed = (performance.now() - started) / 1000;
  // Ours: the samples and the first read of the counter (the last one commits after it has read).
  const own = samples + 1;
  const total = Math.max(0, after - before - own);
  return {
    quietSeconds,
    seconds: elapsed,
    commits: total,
    commitsPerSec: total / elapsed,
    busiest: [...seen]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([query, n]) => ({ query, seen: n })),
  };
}
