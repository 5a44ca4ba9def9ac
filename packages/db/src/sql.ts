import type { CompiledQuery } from 'kysely';
import type { Pool, PoolClient } from 'pg';
import { BoundedClient, commitDeadline, DatabaseUnavailableError, guardedCommit } from './bounded.ts';
import { bind, prepared, type Query, type Statement } from './statements.ts';

/**
 * The one way services reach PostgreSQL: statements built from the entities' types (statements.ts), run as named
 * prepared statements. `PgDb` runs them on the pool, `TxDb` inside a transaction; both open a transaction the same way,
 * so a service neither knows nor asks which it was given.
 */
export interface Db {
  /** Runs a statement built once by `statement()`, with its named parameters. */
  run<P, R>(stmt: Statement<P, R>, params: P): Promise<R[]>;
  /** Runs a query built per call; its text is prepared once per connection like any other. */
  query<R>(q: Query<R>): Promise<R[]>;
  /** Runs `fn` in a transaction: a new one on the pool; inside a transaction, that same transaction. */
  transaction<T>(fn: (tx: TxDb) => Promise<T>): Promise<T>;
  /** SQL as written (`$n` placeholders), unprepared: for libraries such as pg-boss that bring their own statements. */
  raw(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /**
   * Work to run once the surrounding transaction has committed, outside it (e.g. bumping a shared counter without
   * holding its lock); on the pool, at once.
   */
  afterCommit(fn: (db: Db) => Promise<unknown>): Promise<void> | void;
}

const built = new Map<string, { name: string; text: string }>();

/** A per-call query's name, computed once per distinct text (bounded by the code's query shapes, not by traffic). */
function named(text: string): { name: string; text: string } {
  let c = built.get(text);
  if (!c) built.set(text, (c = prepared(text)));
  return c;
}

/**
 * A statement's parameter that stands for its commit deadline: `run` puts in its place the instant, on the server's
 * clock, at which this client stops waiting for the statement (null without a time-out). For a statement that commits
 * on its own, to refuse to once its client has given up on it (bounded.ts `commitDeadline`).
 */
export const COMMIT_BY: unique symbol = Symbol('commit deadline');
export type CommitBy = typeof COMMIT_BY;

/**
 * What a pool has sent to PostgreSQL since it opened: round trips (every statement, `begin`, `commit` and `rollback`
 * is one) and the transactions it opened explicitly (a statement run on its own is a transaction of its own too).
 */
export interface DbTraffic {
  roundTrips: number;
  transactions: number;
}

async function send<R>(
  conn: BoundedClient,
  stmt: { name: string; text: string },
  values: unknown[],
  timeoutMs: number | undefined,
  traffic: DbTraffic,
) {
  const bound = values.includes(COMMIT_BY) ? values.map((v) => (v === COMMIT_BY ? commitDeadline(conn.client, timeoutMs) : v)) : values;
  traffic.roundTrips++;
  const result = await conn.query({ name: stmt.name, text: stmt.text, values: bound }, timeoutMs);
  return result.rows as R[];
}

const compileQuery = <R>(q: Query<R>): CompiledQuery<R> => ('compile' in q ? q.compile() : q);

export interface TxOptions {
  /** Client-side give-up per statement (performance.now() milliseconds); unset: as long as the server takes. */
  queryTimeoutMs?: number | undefined;
  /** performance.now() past which no statement of the transaction is sent or waited for. */
  deadline?: number | undefined;
}

/** A transaction's connection. `raw` runs SQL as written ($n placeholders), for libraries such as pg-boss. */
export class TxDb implements Db {
  readonly client: PoolClient;
  readonly conn: BoundedClient;
  /** Work to run once the transaction has committed, outside it (e.g. bumping a shared counter without holding its lock). */
  readonly committed: ((db: Db) => Promise<unknown>)[] = [];
  private readonly queryTimeoutMs: number | undefined;
  deadline: number | undefined;
  /** The pool's traffic, which this transaction's statements add to. */
  readonly traffic: DbTraffic;
  constructor(client: PoolClient | BoundedClient, opts: TxOptions = {}, traffic: DbTraffic = { roundTrips: 0, transactions: 0 }) {
    this.conn = client instanceof BoundedClient ? client : new BoundedClient(client);
    this.client = this.conn.client;
    this.queryTimeoutMs = opts.queryTimeoutMs;
    this.deadline = opts.deadline;
    this.traffic = traffic;
  }
  /** The time the next statement may take: the per-statement limit, cut to what is left of the transaction's budget. */
  timeout(): number | undefined {
    if (this.deadline === undefined) return this.queryTimeoutMs;
    const left = this.deadline - performance.now();
    return this.queryTimeoutMs === undefined ? left : Math.min(left, this.queryTimeoutMs);
  }
  afterCommit(fn: (db: Db) => Promise<unknown>): void {
    this.committed.push(fn);
  }
  run<P, R>(stmt: Statement<P, R>, params: P): Promise<R[]> {
    return send<R>(this.conn, stmt, bind(stmt, params), this.timeout(), this.traffic);
  }
  query<R>(q: Query<R>): Promise<R[]> {
    const c = compileQuery(q);
    return send<R>(this.conn, named(c.sql), c.parameters as unknown[], this.timeout(), this.traffic);
  }
  /** Already in one: the work joins it and commits or rolls back with it. */
  transaction<T>(fn: (tx: TxDb) => Promise<T>): Promise<T> {
    return fn(this);
  }
  async raw(text: string, values: unknown[] = []): Promise<{ rows: unknown[] }> {
    this.traffic.roundTrips++;
    return this.conn.query({ text, values }, this.timeout());
  }
}

export interface PgDbOptions {
  onAfterCommitError?: (err: unknown) => void;
  /** Client-side give-up per statement; the connection is then destroyed. Unset: as long as the server takes. */
  queryTimeoutMs?: number | undefined;
  /**
   * Budget of a transaction from asking for its connection to its commit, enforced by the client and, for the commit,
   * by the server (guardedCommit). Unset: none.
   */
  transactionTimeoutMs?: number | undefined;
}

/** Connections open (`total`, of which `idle`), and callers waiting for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/**
 * The hot path's way to the database: a pg pool, with prepared statements and plain transactions. With time-outs set,
 * every wait is bounded: no connection in time is DatabaseUnavailableError, a statement or transaction past its budget
 * is DatabaseTimeoutError (or PostgreSQL's own statement_timeout / lock_timeout error), and a transaction that fails
 * is rolled back.
 */
export class PgDb implements Db {
  readonly pool: Pool;
  private readonly onError: (err: unknown) => void;
  private readonly queryTimeoutMs: number | undefined;
  private readonly transactionTimeoutMs: number | undefined;
  /** Round trips and transactions since the pool opened (metrics and the bench read them; tests count them). */
  readonly traffic: DbTraffic = { roundTrips: 0, transactions: 0 };
  constructor(pool: Pool, opts: PgDbOptions = {}) {
    this.pool = pool;
    this.onError = opts.onAfterCommitError ?? (() => {});
    this.queryTimeoutMs = opts.queryTimeoutMs;
    this.transactionTimeoutMs = opts.transactionTimeoutMs;
  }

  /** The pool's occupancy, for the metrics a scrape reads: callers never reach into the pool for it. */
  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  private async connect(): Promise<BoundedClient> {
    try {
      return new BoundedClient(await this.pool.connect());
    } catch (err) {
      throw new DatabaseUnavailableError(err);
    }
  }

  private async once<T>(work: (conn: BoundedClient) => Promise<T>): Promise<T> {
    const conn = await this.connect();
    try {
      return await work(conn);
    } finally {
      conn.release();
    }
  }

  run<P, R>(stmt: Statement<P, R>, params: P): Promise<R[]> {
    return this.once((conn) => send<R>(conn, stmt, bind(stmt, params), this.queryTimeoutMs, this.traffic));
  }

  query<R>(q: Query<R>): Promise<R[]> {
    const c = compileQuery(q);
    return this.once((conn) => send<R>(conn, named(c.sql), c.parameters as unknown[], this.queryTimeoutMs, this.traffic));
  }

  async raw(text: string, values: unknown[] = []): Promise<{ rows: unknown[] }> {
    this.traffic.roundTrips++;
    return this.once((conn) => conn.query({ text, values }, this.queryTimeoutMs));
  }

  /** Nothing to wait for outside a transaction. */
  async afterCommit(fn: (db: Db) => Promise<unknown>): Promise<void> {
    await fn(this);
  }

  async transaction<T>(fn: (tx: TxDb) => Promise<T>): Promise<T> {
    const deadline = this.transactionTimeoutMs === undefined ? undefined : performance.now() + this.transactionTimeoutMs;
    const conn = await this.connect();
    const tx = new TxDb(conn, { queryTimeoutMs: this.queryTimeoutMs, deadline }, this.traffic);
    try {
      this.traffic.transactions++;
      this.traffic.roundTrips++;
      await conn.query({ text: 'begin' }, tx.timeout());
      const begun = performance.now();
      const result = await fn(tx);
      const timeout = tx.timeout();
      this.traffic.roundTrips++;
      // The server's transaction began before `begun`, so a budget that ends when we stop waiting for the commit, as
      // measured from `begun`, ends no later on the server's clock: a commit it reads after we gave up is refused.
      if (timeout === undefined) await conn.query({ text: 'commit' }, undefined);
      else await guardedCommit(conn, performance.now() + timeout - begun, timeout);
      // On the same connection, now outside the transaction and its budget: asking the pool for another one while
      // holding this one would deadlock once every connection is held. The data is committed whatever happens here, so
      // a failure is reported, not thrown at the caller.
      tx.deadline = undefined;
      for (const job of tx.committed) await job(tx).catch(this.onError);
      return result;
    } catch (err) {
      // A connection in doubt was destroyed (the server rolls back when it notices); a sound one rolls back here.
      if (!conn.broken) this.traffic.roundTrips++;
      if (!conn.broken)
        await conn
          .query({ text: 'rollback' }, this.queryTimeoutMs)
          .catch((e: unknown) => conn.break(e instanceof Error ? e : new Error(String(e))));
      throw err;
    } finally {
      conn.release();
    }
  }
}
