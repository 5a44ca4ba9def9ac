import type { PoolClient, QueryConfig, QueryResult } from 'pg';

/**
 * Bounded database time: the request path never waits on PostgreSQL for longer than its settings allow. A server that
 * stops answering (frozen, or the network gone) cannot enforce its own time-outs, so the client gives up too, and a
 * connection it gave up on is destroyed: its last statement may still be in flight, and must never meet another caller.
 */

/** No connection could be had in time (pool exhausted, server refusing or not answering the start-up): retry later. */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`No database connection could be had: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/** A statement or transaction ran past its budget on the client's clock; its connection was destroyed or rolled back. */
export class DatabaseTimeoutError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'DatabaseTimeoutError';
  }
}

/** node-postgres's words when `query_timeout` fires. */
const READ_TIMEOUT = 'Query read timeout';

/** A server error after which the session is fine (the statement failed, the connection did not). */
function sessionSurvives(err: unknown): boolean {
  const e = err as { severity?: unknown; code?: unknown } | null;
  return e?.severity === 'ERROR' && typeof e.code === 'string' && !/^(08|57P0)/.test(e.code);
}

/**
 * One connection's statements, each given up on after `timeoutMs()` milliseconds. The first failure that leaves the
 * connection in doubt (a client-side time-out, a lost or fatally ended session) destroys its socket at once and marks it
 * `broken`, so that it is removed from the pool, not reused.
 */
export class BoundedClient {
  readonly client: PoolClient;
  broken: Error | undefined;
  constructor(client: PoolClient) {
    this.client = client;
  }

  async query(config: QueryConfig, timeoutMs: number | undefined): Promise<QueryResult> {
    if (this.broken) throw new DatabaseTimeoutError('The connection was given up on after an earlier failure', this.broken);
    if (timeoutMs !== undefined && timeoutMs <= 0) throw new DatabaseTimeoutError('The transaction ran out of its time budget');
    try {
      // query_timeout per query is read by node-postgres but missing from its typings.
      return await this.client.query(
        timeoutMs === undefined ? config : ({ ...config, query_timeout: Math.ceil(timeoutMs) } as QueryConfig),
      );
    } catch (err) {
      if (sessionSurvives(err)) throw err;
      const failure =
        err instanceof Error && err.message === READ_TIMEOUT
          ? new DatabaseTimeoutError(`PostgreSQL did not answer within ${Math.ceil(timeoutMs ?? 0)} ms`, err)
          : err instanceof Error
            ? err
            : new Error(String(err));
      this.break(failure);
      throw failure;
    }
  }

  /** Destroys the socket: a statement still in flight dies with the session once PostgreSQL reads again. */
  break(reason: Error): void {
    if (this.broken) return;
    this.broken = reason;
    // The pool listens for errors only on idle clients; this one is about to be released as broken.
    this.client.on('error', () => {});
    (this.client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }

  /** Back to the pool, or out of it when broken. */
  release(): void {
    this.client.release(this.broken);
  }
}

/**
 * How far each connection's server clock is ahead of this process's (milliseconds, measured when the connection opened:
 * `measureClockOffset`), for deadlines a statement checks on the server's clock (`commitDeadline`).
 */
const clockOffsets = new WeakMap<object, number>();

/**
 * A reading whose round trip took longer than this is taken again (at most CLOCK_READINGS in all), for as long as each
 * comes back in under half the shortest before it: a busy moment passes, a database far away stays far (one reading
 * more, not two).
 */
const CLOCK_ROUND_TRIP_MS = 5;
const CLOCK_READINGS = 3;

/**
 * Reads the server's clock over `client` and keeps its offset from ours as a lower bound: the server read its clock
 * somewhere between our send and our receipt, so `server - received` is never more than the true offset, and a
 * deadline built on it is never later, on the server's clock, than the moment we stop waiting. (A midpoint estimate is
 * off by up to half the round trip either way: on a loaded host a one-trip write sent to a frozen server committed
 * after its client had answered "failed".) The bound is early by the round trip, well under a millisecond beside the
 * database; a reading slowed by a busy moment is taken again, and the tightest kept, so that a connection opened then
 * does not refuse statements near their time-out for its whole life. `setUp` runs in the first reading's round trip.
 */
export async function measureClockOffset(client: { query(text: string): Promise<unknown> }, setUp = ''): Promise<void> {
  let offset = -Infinity;
  let shortest = Infinity;
  for (let reading = 0; reading < CLOCK_READINGS; reading++) {
    const sent = Date.now();
    const results = (await client.query(
      `${reading === 0 ? setUp : ''}select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`,
    )) as QueryResult | QueryResult[];
    const received = Date.now();
    const last = Array.isArray(results) ? results.at(-1) : results;
    const serverMs = Number((last?.rows[0] as { ms?: unknown } | undefined)?.ms);
    if (!Number.isFinite(serverMs)) break;
    // Date.now() counts whole milliseconds: the answer arrived before received + 1.
    offset = Math.max(offset, serverMs - (received + 1));
    const roundTrip = received - sent;
    if (roundTrip <= CLOCK_ROUND_TRIP_MS || roundTrip > shortest / 2) break;
    shortest = roundTrip;
  }
  if (Number.isFinite(offset)) clockOffsets.set(client, offset);
}

/**
 * The instant, on the server's clock, past which a statement sent now on `client` must not commit: when its client
 * stops waiting for it (`timeoutMs` from now). Null without a time-out. A statement that commits on its own (no
 * transaction to roll back) checks it last (e.g. `leadwire_refuse` in contacts/v1/one-trip-sql.ts), so that a server
 * that was frozen with the statement unread does not write it once it runs again, after the client answered "failed".
 */
export function commitDeadline(client: object, timeoutMs: number | undefined): Date | null {
  if (timeoutMs === undefined) return null;
  return new Date(Date.now() + (clockOffsets.get(client) ?? 0) + timeoutMs);
}

/** SQLSTATE of the commit guard refusing: division by zero, from a guard that divides by "still in time". */
const GUARD_REFUSED = '22012';

/**
 * `commit`, unless the transaction has been open on the server for `budgetMs` or more: a commit that reached a frozen
 * server and is read only when it resumes, after the client gave up and answered "failed", must not make the write
 * happen after all. Both statements go in one simple query, so a failing guard skips the commit, and the session's end
 * rolls the transaction back. `now()` is the transaction's start on the server's own clock, so no clock skew enters.
 */
export async function guardedCommit(conn: BoundedClient, budgetMs: number, timeoutMs: number | undefined): Promise<void> {
  const ms = Math.max(0, Math.floor(budgetMs));
  try {
    await conn.query({ text: `select 1 / (clock_timestamp() - now() < interval '${ms} milliseconds')::int as in_time; commit` }, timeoutMs);
  } catch (err) {
    if ((err as { code?: unknown }).code === GUARD_REFUSED)
      throw new DatabaseTimeoutError(`The transaction ran past its ${ms} ms budget on the server; rolled back`, err);
    throw err;
  }
}
