import { randomBytes } from 'node:crypto';
import type { PgDb } from '@leadwire/db';
import type { PoolClient } from 'pg';
import type { Clock, ClockTimer } from '../../clock.ts';
import type { Logger } from '../../context.ts';

/** A fresh positive 63-bit key: one per worker process, so another process's lock never collides with ours. */
export function newWorkerKey(): string {
  const bytes = randomBytes(8);
  bytes[0] = bytes[0]! & 0x7f;
  return BigInt(`0x${bytes.toString('hex')}`).toString();
}

/** Waits before re-locking after the connection dropped (PostgreSQL restarting): a small, fixed pace. */
const RELOCK_DELAY_MS = 500;

/**
 * The liveness of a worker process, as PostgreSQL sees it: a session-level advisory lock on the process's own key,
 * held on a connection kept for the process's lifetime. Attempts a worker takes are stamped with the key; while the
 * lock is held, nobody else touches them; once the session is gone (the process was killed), sweepers see the lock
 * missing in pg_locks and queue those attempts again at once.
 *
 * If the connection drops (PostgreSQL restarting), every lock goes with it; the process then takes no new attempt
 * until it holds the SAME key again, so its attempts in flight stay its own as soon as it is back.
 */
export class WorkerLock {
  readonly key = newWorkerKey();
  private client: PoolClient | null = null;
  private wanted = false;
  private connecting: Promise<void> | null = null;
  private timer: ClockTimer | null = null;
  private readonly db: PgDb;
  private readonly log: Logger;
  private readonly clock: Clock;

  constructor(db: PgDb, log: Logger, clock: Clock) {
    this.db = db;
    this.log = log;
    this.clock = clock;
  }

  /** True while this process holds its key. */
  get held(): boolean {
    return this.client !== null;
  }

  /**
   * Whether this process holds its key, taking it again first if it was lost and not released: a job fetched the moment
   * PostgreSQL is back may come before the relock's next try. False while it cannot be taken (PostgreSQL still away).
   */
  async ready(): Promise<boolean> {
    if (this.client) return true;
    if (!this.wanted) return false;
    return this.acquire().then(
      () => this.held,
      () => false,
    );
  }

  /** Takes the lock (once); keeps re-taking it after the connection drops until `release()`. */
  async acquire(): Promise<void> {
    this.wanted = true;
    if (this.client) return;
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    await this.connecting;
  }

  private async connect(): Promise<void> {
    const client = await this.db.pool.connect();
    let dropped = false;
    const onDrop = (err?: unknown) => {
      if (dropped) return;
      dropped = true;
      if (this.client === client) this.client = null;
      client.release(err instanceof Error ? err : new Error('worker lock connection ended'));
      if (this.wanted) {
        this.log.warn({ err }, 'webhook worker lock lost; taking it again');
        this.scheduleRelock();
      }
    };
    client.on('error', onDrop);
    client.on('end', () => onDrop());
    try {
      await client.query('select pg_advisory_lock($1::bigint)', [this.key]);
    } catch (err) {
      onDrop(err);
      throw err;
    }
    if (!this.wanted) {
      await client.query('select pg_advisory_unlock($1::bigint)', [this.key]).catch(() => {});
      dropped = true;
      client.release();
      return;
    }
    this.client = client;
  }

  private scheduleRelock(): void {
    if (this.timer) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      if (!this.wanted || this.client) return;
      this.acquire().catch(() => this.scheduleRelock());
    }, RELOCK_DELAY_MS);
  }

  /** Gives the key up: call only once no attempt of this process is in flight any more. */
  async release(): Promise<void> {
    this.wanted = false;
    this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = null;
    if (!client) return;
    client.removeAllListeners('end');
    try {
      await client.query('select pg_advisory_unlock($1::bigint)', [this.key]);
      client.removeAllListeners('error');
      client.release();
    } catch (err) {
      client.release(err instanceof Error ? err : new Error(String(err)));
    }
  }
}
