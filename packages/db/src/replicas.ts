import { sql } from 'kysely';
import { DatabaseTimeoutError, DatabaseUnavailableError } from './bounded.ts';
import type { Db, PgDb } from './sql.ts';
import { qb, statement } from './statements.ts';

/**
 * Read replicas (PostgreSQL streaming standbys) for the reads that tolerate a little lag (docs/scaling.md). This file
 * decides where one read goes; which reads may go at all is the caller's list. The rules:
 *
 * - **Lag guard.** Each replica is probed every `checkMs`: a replica that does not answer, is not in recovery, or
 *   whose replay lag is over `maxLagMs` (or unknown, or not measured for `staleAfterMs`) gets no reads, which go to
 *   the primary instead. It gets them again once a probe finds it well.
 * - **Read-your-writes.** After a write by a caller (an API key, a session), the primary's WAL insert position is
 *   remembered for that caller; its reads go only to a replica whose replay position, as last probed, is at or past it.
 *   The memory lasts `maxLagMs` plus `staleAfterMs`: past that, any replica the lag guard lets through was probed
 *   after the write with a lag under the bound, so it had replayed a commit later than the write (its lag is measured
 *   from the last commit it replayed), and nothing is left to protect. Callers that only read are never in it.
 */

/** A WAL position as PostgreSQL prints it (`16/B374D848`), as a number that compares. */
export function parseLsn(text: string): bigint {
  const [hi = '', lo = ''] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/** Why a replica-safe read went to the primary. */
export type ReadFallback = 'down' | 'lagging' | 'not_replayed' | 'read_failed';

export interface ReplicaStatus {
  /** `replica1`, `replica2`, ...: the position in DATABASE_REPLICA_URLS, never the URL (it holds a password). */
  name: string;
  /** Answered its last probe as a standby, and no read has failed on it since. */
  up: boolean;
  /** Replay lag at the last probe, milliseconds; 0 when it had replayed all the primary had flushed. Null: unknown. */
  lagMs: number | null;
  /** Replay position at the last probe. */
  replayLsn: bigint | null;
  /** When the last probe ended, on the clock given; null before the first. */
  checkedAt: number | null;
}

/** Where one read runs. */
export type ReadChoice = { pool: string; db: Db; replica: true } | { pool: 'primary'; db: Db; replica: false; fallback: ReadFallback };

/** The app's clock as far as probing needs it (core's Clock fits: its timer type is opaque here, hence `never`). */
export interface ReplicaClock {
  now(): Date;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(timer: never): void;
}

export interface ReplicaSetOptions {
  /** The request path's pool on the primary: reads that cannot go to a replica, and the WAL positions. */
  primary: Db;
  replicas: readonly { name: string; db: PgDb }[];
  maxLagMs: number;
  checkMs: number;
  /**
   * A replica whose last probe ended longer ago than this gets no reads: its probe hangs. Above `checkMs` by at least
   * the time a probe may take (the pool's time-outs), or a replica merely slow to answer on a busy host is skipped.
   */
  staleAfterMs: number;
  clock: ReplicaClock;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

const WRITE_POSITION = statement<Record<never, never>>()(() => qb.selectNoFrom(sql<string>`pg_current_wal_insert_lsn()::text`.as('lsn')));
/** What a standby can have replayed at most: WAL not yet flushed on the primary has not been sent. */
const FLUSH_POSITION = statement<Record<never, never>>()(() => qb.selectNoFrom(sql<string>`pg_current_wal_flush_lsn()::text`.as('lsn')));
const REPLICA_STATE = statement<Record<never, never>>()(() =>
  qb.selectNoFrom([
    sql<boolean>`pg_is_in_recovery()`.as('standby'),
    sql<string | null>`pg_last_wal_replay_lsn()::text`.as('replayed'),
    sql<Date | string | null>`pg_last_xact_replay_timestamp()`.as('replayedAt'),
  ]),
);

interface Replica {
  name: string;
  db: PgDb;
  status: ReplicaStatus;
}

/** A caller's last write: the primary's WAL position after it (null: not known, so the primary until `until`). */
interface Written {
  lsn: bigint | null;
  until: number;
}

/** A failure that says the replica is unreachable or unwell, not that the statement was wrong. */
export function replicaUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError || err instanceof DatabaseTimeoutError) return true;
  const e = err as { code?: unknown; severity?: unknown } | null;
  // Connection exceptions (08), shutdown and start-up (57P01-57P03), a statement cancelled (57014: its time-out).
  if (typeof e?.code === 'string' && /^(08|57P0|57014)/.test(e.code)) return true;
  // node-postgres's own errors when the socket broke ("Connection terminated unexpectedly", ECONNRESET): plain Errors
  // without a server severity. A TypeError and the like is a bug, not the replica's state.
  return err?.constructor === Error && e?.severity === undefined;
}

export class ReplicaSet {
  private readonly replicas: Replica[];
  private readonly primary: Db;
  private readonly opts: ReplicaSetOptions;
  private readonly written = new Map<string, Written>();
  private next = 0;
  private timer: unknown;
  private probing: Promise<void> | undefined;
  private closed = false;

  constructor(opts: ReplicaSetOptions) {
    this.opts = opts;
    this.primary = opts.primary;
    this.replicas = opts.replicas.map((r) => ({
      name: r.name,
      db: r.db,
      status: { name: r.name, up: false, lagMs: null, replayLsn: null, checkedAt: null },
    }));
  }

  /** The replicas as last probed, for the metrics. */
  statuses(): ReplicaStatus[] {
    return this.replicas.map((r) => ({ ...r.status }));
  }

  /** The replicas' pools by name, for the pool metrics. */
  pools(): Record<string, PgDb> {
    return Object.fromEntries(this.replicas.map((r) => [r.name, r.db]));
  }

  /** Probes now, then every `checkMs`; returns once the first probe is done. */
  async start(): Promise<void> {
    await this.probe();
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.opts.clock.setTimeout(() => void this.probe().finally(() => this.schedule()), this.opts.checkMs);
  }

  /** Reads every replica's state (one at a time per replica; a probe already running is joined). */
  probe(): Promise<void> {
    this.probing ??= this.probeAll().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async probeAll(): Promise<void> {
    let flushed: bigint | null = null;
    try {
      const [row] = await this.primary.run(FLUSH_POSITION, {});
      flushed = row ? parseLsn(row.lsn) : null;
    } catch {
      // The primary down: the replicas are judged by their replay time alone.
    }
    await Promise.all(this.replicas.map((r) => this.probeOne(r, flushed)));
  }

  private async probeOne(r: Replica, flushed: bigint | null): Promise<void> {
    const was = r.status;
    try {
      const [row] = await r.db.run(REPLICA_STATE, {});
      const now = this.opts.clock.now().getTime();
      if (!row?.standby) {
        r.status = { ...was, up: false, lagMs: null, checkedAt: now };
        if (was.up || was.checkedAt === null)
          this.opts.log.warn({ replica: r.name }, 'read replica is not a standby (not in recovery): no reads go to it');
        return;
      }
      const replayLsn = row.replayed === null ? null : parseLsn(row.replayed);
      const caughtUp = flushed !== null && replayLsn !== null && replayLsn >= flushed;
      const lagMs = caughtUp ? 0 : row.replayedAt === null ? null : Math.max(0, now - new Date(row.replayedAt).getTime());
      r.status = { name: r.name, up: true, lagMs, replayLsn, checkedAt: now };
      if (!was.up) this.opts.log.info({ replica: r.name, lagMs }, 'read replica answers');
    } catch (err) {
      r.status = { ...was, up: false, checkedAt: this.opts.clock.now().getTime() };
      if (was.up || was.checkedAt === null)
        this.opts.log.warn({ replica: r.name, err }, 'read replica does not answer: its reads go to the primary');
    }
  }

  private usable(r: Replica, now: number): boolean {
    const s = r.status;
    return s.up && s.lagMs !== null && s.lagMs <= this.opts.maxLagMs && s.checkedAt !== null && now - s.checkedAt <= this.opts.staleAfterMs;
  }

  /** Where a replica-safe read of `caller` (a key's or a session's id; undefined: anonymous) goes. */
  choose(caller: string | undefined): ReadChoice {
    const now = this.opts.clock.now().getTime();
    const usable = this.replicas.filter((r) => this.usable(r, now));
    if (usable.length === 0) {
      const fallback = this.replicas.some((r) => r.status.up) ? 'lagging' : 'down';
      return { pool: 'primary', db: this.primary, replica: false, fallback };
    }
    const write = caller === undefined ? undefined : this.written.get(caller);
    const fresh =
      write === undefined || write.until <= now
        ? usable
        : usable.filter((r) => write.lsn !== null && r.status.replayLsn !== null && r.status.replayLsn >= write.lsn);
    if (fresh.length === 0) return { pool: 'primary', db: this.primary, replica: false, fallback: 'not_replayed' };
    const r = fresh[this.next++ % fresh.length]!;
    return { pool: r.name, db: r.db, replica: true };
  }

  /**
   * A read on replica `pool` failed and was answered by the primary instead; a failure that says the replica is
   * unreachable takes it out until a probe finds it well.
   */
  readFailed(pool: string, err: unknown): void {
    const r = this.replicas.find((x) => x.name === pool);
    if (!r || !replicaUnavailable(err)) return;
    if (r.status.up) this.opts.log.warn({ replica: r.name, err }, 'read replica failed a read: its reads go to the primary');
    r.status = { ...r.status, up: false };
  }

  /**
   * `caller` has just written (its transaction committed): remembers the primary's WAL position, so that its reads
   * wait for a replica that has replayed it. One statement on the primary; if it fails, the caller reads from the
   * primary for the whole memory instead.
   */
  async wrote(caller: string): Promise<void> {
    let lsn: bigint | null = null;
    try {
      const [row] = await this.primary.run(WRITE_POSITION, {});
      lsn = row ? parseLsn(row.lsn) : null;
    } catch {
      lsn = null;
    }
    const now = this.opts.clock.now().getTime();
    const before = this.written.get(caller);
    // An earlier write still remembered: the later position wins; one not known keeps the caller on the primary.
    if (before !== undefined && before.until > now) lsn = before.lsn === null || lsn === null ? null : before.lsn > lsn ? before.lsn : lsn;
    // Re-inserted, so the map stays in order of expiry and the sweep below stops at the first live entry.
    this.written.delete(caller);
    this.written.set(caller, { lsn, until: now + this.opts.maxLagMs + this.opts.staleAfterMs });
    for (const [key, w] of this.written) {
      if (w.until > now) break;
      this.written.delete(key);
    }
  }

  /** Stops probing and closes the replicas' pools. */
  async close(): Promise<void> {
    this.closed = true;
    this.opts.clock.clearTimeout(this.timer as never);
    await this.probing;
    await Promise.all(this.replicas.map((r) => r.db.pool.end()));
  }
}
