import type pg from 'pg';

/**
 * What PostgreSQL wrote during a phase, from its cumulative statistics (no extension needed): WAL records, bytes and
 * full-page images, committed transactions, and rows inserted, updated (HOT or not) and deleted per table, with the
 * index entries those imply (an insert or a non-HOT update adds one to every index of its table; fewer where a partial
 * index's predicate leaves the row out, which these statistics cannot tell, so the figure is an upper bound). Divided by the
 * phase's requests, it says where a request's database work goes. Backends flush their counters about once a second,
 * so a 10-second window is right within a few percent.
 */
export interface WriteProfile {
  walRecords: number;
  walBytes: number;
  walFpi: number;
  commits: number;
  /** The window's length: the server's idle commits over it are subtracted from `commits` where a rate is compared. */
  seconds: number;
  /** From the server's /metrics (its request pool): round trips and `begin`s; null when no origin was given. */
  roundTrips: number | null;
  explicitTransactions: number | null;
  tables: { table: string; inserted: number; updated: number; hot: number; deleted: number; indexEntries: number }[];
}

interface Snapshot {
  walRecords: number;
  walBytes: number;
  walFpi: number;
  commits: number;
  at: number;
  roundTrips: number | null;
  explicitTransactions: number | null;
  tables: Map<string, { ins: number; upd: number; hot: number; del: number; indexes: number }>;
}

/** A counter of the server's /metrics for its request pool (`pool="request"`), or null when it cannot be read. */
async function poolCounters(origin: string | undefined): Promise<{ roundTrips: number; transactions: number } | null> {
  if (!origin) return null;
  const res = await fetch(`${origin}/metrics`).catch(() => null);
  if (!res?.ok) return null;
  const text = await res.text();
  const read = (name: string) => Number(new RegExp(`^${name}\\{pool="request"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  const c = { roundTrips: read('leadwire_db_round_trips_total'), transactions: read('leadwire_db_transactions_total') };
  return Number.isFinite(c.roundTrips) && Number.isFinite(c.transactions) ? c : null;
}

/** The snapshot's own statements (clear, WAL, database, tables): each commits, and is taken out of the figure. */
const OWN_COMMITS = 4;

async function snapshot(pool: pg.Pool, origin: string | undefined): Promise<Snapshot> {
  const counters = await poolCounters(origin);
  const client = await pool.connect();
  try {
    // Each statement below reads fresh counters, not the transaction's cached snapshot.
    await client.query('select pg_stat_clear_snapshot()');
    const {
      rows: [wal],
    } = await client.query<{ records: string; bytes: string; fpi: string }>(
      'select wal_records::text as records, wal_bytes::text as bytes, wal_fpi::text as fpi from pg_stat_wal',
    );
    const {
      rows: [db],
    } = await client.query<{ commits: string }>(
      'select xact_commit::text as commits from pg_stat_database where datname = current_database()',
    );
    const { rows } = await client.query<{ relname: string; ins: string; upd: string; hot: string; del: string; indexes: string }>(
      `select t.relname, t.n_tup_ins::text as ins, t.n_tup_upd::text as upd, t.n_tup_hot_upd::text as hot,
         t.n_tup_del::text as del, (select count(*) from pg_index i where i.indrelid = t.relid)::text as indexes
       from pg_stat_user_tables t`,
    );
    return {
      walRecords: Number(wal?.records ?? 0),
      walBytes: Number(wal?.bytes ?? 0),
      walFpi: Number(wal?.fpi ?? 0),
      commits: Number(db?.commits ?? 0),
      at: performance.now(),
      roundTrips: counters?.roundTrips ?? null,
      explicitTransactions: counters?.transactions ?? null,
      tables: new Map(
        rows.map((r) => [
          r.relname,
          { ins: Number(r.ins), upd: Number(r.upd), hot: Number(r.hot), del: Number(r.del), indexes: Number(r.indexes) },
        ]),
      ),
    };
  } finally {
    client.release();
  }
}

/**
 * Starts a write profile; the returned function ends it. With the server's `origin`, its request pool's round trips and
 * transactions are read from /metrics as well.
 */
export async function writeProfiler(pool: pg.Pool, origin?: string): Promise<() => Promise<WriteProfile>> {
  const a = await snapshot(pool, origin);
  return async () => {
    // Let the backends' pending counters (flushed at most once a second) reach the shared statistics.
    await new Promise((r) => setTimeout(r, 1100));
    const b = await snapshot(pool, origin);
    const diff = (x: number | null, y: number | null) => (x === null || y === null ? null : y - x);
    const tables: WriteProfile['tables'] = [];
    for (const [table, t] of b.tables) {
      const s = a.tables.get(table) ?? { ins: 0, upd: 0, hot: 0, del: 0, indexes: t.indexes };
      const inserted = t.ins - s.ins;
      const updated = t.upd - s.upd;
      const hot = t.hot - s.hot;
      const deleted = t.del - s.del;
      if (inserted + updated + deleted === 0) continue;
      tables.push({ table, inserted, updated, hot, deleted, indexEntries: (inserted + updated - hot) * t.indexes });
    }
    tables.sort((x, y) => y.inserted + y.updated + y.deleted - (x.inserted + x.updated + x.deleted));
    return {
      walRecords: b.walRecords - a.walRecords,
      walBytes: b.walBytes - a.walBytes,
      walFpi: b.walFpi - a.walFpi,
      commits: b.commits - a.commits - OWN_COMMITS,
      seconds: (b.at - a.at) / 1000,
      roundTrips: diff(a.roundTrips, b.roundTrips),
      explicitTransactions: diff(a.explicitTransactions, b.explicitTransactions),
      tables,
    };
  };
}

/** Commits per operation, with what the server commits when idle over the same window taken out. */
export function commitsPerOp(p: WriteProfile, ops: number, idleCommitsPerSec: number): number {
  return ops ? Math.max(0, p.commits - idleCommitsPerSec * p.seconds) / ops : Number.NaN;
}

/** The profile per operation, as lines for the report. */
export function formatWriteProfile(name: string, p: WriteProfile, ops: number, idleCommitsPerSec: number): string[] {
  if (!ops) return [];
  const per = (n: number) => (n / ops).toFixed(2);
  const trips =
    p.roundTrips === null ? '' : `, ${per(p.roundTrips)} round trips and ${per(p.explicitTransactions ?? 0)} begins on the request pool`;
  const lines = [
    `  ${name}: per request ${commitsPerOp(p, ops, idleCommitsPerSec).toFixed(2)} commits (idle rate taken out)${trips}, ` +
      `${per(p.walRecords)} WAL records, ${Math.round(p.walBytes / ops)} WAL bytes (${per(p.walFpi)} full-page images)`,
  ];
  for (const t of p.tables) {
    lines.push(
      `    ${t.table.padEnd(24)} inserted ${per(t.inserted)}, updated ${per(t.updated)} (HOT ${per(t.hot)}), deleted ${per(t.deleted)}; index entries up to ${per(t.indexEntries)}`,
    );
  }
  return lines;
}
