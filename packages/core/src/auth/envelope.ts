import { type ApiKeyType, COMMIT_BY, type Db, type Statement } from '@leadwire/db';
import { errors } from '../errors.ts';
import { IDEMPOTENCY_TTL_MS, runIdempotent } from '../idempotency/transaction.ts';
import type { KeyGuard, KeySighting } from '../limits/key-guard.ts';
import { enforceRateLimits } from '../limits/rate-limit.ts';
import { COUNT_REQUEST, ENVELOPE_ONLY, type EnvelopeCall, type EnvelopeRow } from './envelope-sql.ts';
import { refuseKey } from './resolve-key.ts';

const MINUTE_MS = 60_000;
/** SQLSTATE of `leadwire_refuse` (Migration20261128150000). */
const REFUSED = 'LW001';

/** Why a single write's function refused to commit (`leadwire_refuse`, SQLSTATE LW001, in Migration20261128150000). */
const REFUSALS = {
  /** The key's window filled up between the admission and the count: the write rolled back, the request is counted alone. */
  spent: 'window_spent_meanwhile',
  /** Another request answered the Idempotency-Key meanwhile (a safety net: its lock makes this not happen). */
  raced: 'idempotency_key_answered_meanwhile',
} as const;

export interface EnvelopeOptions {
  keyId: string;
  surface: ApiKeyType;
  /** Requests the key's one-minute window allows. */
  limit: number;
  /** The request's time, from the app's clock. */
  now: Date;
  guard: KeyGuard;
  sighting: KeySighting;
  /** Where the rate-limit headers go (every counted answer carries them). */
  setHeader: (name: string, value: string | number) => void;
}

/**
 * What a /v1 request must have done in the database besides its own work: its key confirmed, its request counted in the
 * key's window (and refused past the limit, writing nothing), and its Idempotency-Key honoured. A write folds all of it
 * into its own statement (`params()`, then `settle()` with what the statement answered): one round trip and one
 * transaction. Everything else counts the request in a statement of its own (`count()`), before or, when the request
 * failed before reaching the database (validation, scope), after.
 */
export class Envelope {
  /** Set by the Idempotency-Key middleware: the key and the request's fingerprint. */
  idempotency: { key: string; hash: string } | null = null;
  /** The request's count is known (and its headers set). */
  counted = false;
  /** A statement that counts the request was sent: whatever became of it, the request is not counted again. */
  attempted = false;
  /** The answer is a stored one. */
  replayed = false;
  private readonly o: EnvelopeOptions;

  constructor(o: EnvelopeOptions) {
    this.o = o;
  }

  get now(): Date {
    return this.o.now;
  }

  /** The envelope's parameters for a statement that counts the request (auth/envelope-sql.ts). */
  params(): EnvelopeCall {
    this.attempted = true;
    const t = this.o.now.getTime();
    return {
      keyId: this.o.keyId,
      surface: this.o.surface,
      now: this.o.now,
      minute: new Date(t - (t % MINUTE_MS)),
      minuteAgo: new Date(t - MINUTE_MS),
      limit: this.o.limit,
      idemKey: this.idempotency?.key ?? null,
      idemHash: this.idempotency?.hash ?? null,
      idemSince: new Date(t - IDEMPOTENCY_TTL_MS),
      commitBy: COMMIT_BY,
      touch: this.o.guard.touchDue(this.o.keyId, t),
    };
  }

  /**
   * Takes what the request's statement said of its key and window: a key the database refused is a 401 (and
   * forgotten), a spent window a 429 (remembered until it ends). The rate-limit headers are set either way.
   */
  async take(db: Db, keyOk: boolean, hits: number | null): Promise<void> {
    if (!keyOk || hits === null) return refuseKey(db, this.o.guard, this.o.sighting, this.o.now);
    this.counted = true;
    const t = this.o.now.getTime();
    const window = { count: Number(hits), resetAt: new Date(t - (t % MINUTE_MS) + MINUTE_MS) };
    enforceRateLimits([{ window, limit: this.o.limit }], this.o.setHeader, this.o.now, { guard: this.o.guard, key: this.o.sighting });
  }

  /** Counts the request in a statement of its own (once). */
  async count(db: Db): Promise<void> {
    if (this.counted) return;
    const [row] = await db.run(COUNT_REQUEST, this.params());
    await this.take(db, row !== undefined, row?.hits ?? null);
  }

  /**
   * Settles an enveloped statement's answer: throws the refusal it carries (401, 429, a duplicate still running, the
   * key reused for another request), returns the stored answer of a replay, or null when the statement went on to its
   * own work.
   */
  async settle(db: Db, row: EnvelopeRow): Promise<{ response: unknown } | null> {
    await this.take(db, row.key_ok, row.hits);
    if (!this.idempotency) return null;
    if (!row.locked) throw errors.idempotencyInProgress();
    if (row.prior_hash === null) return null;
    if (row.prior_hash !== this.idempotency.hash) throw errors.idempotencyConflict();
    this.replayed = true;
    return { response: row.prior_response };
  }

  /**
   * After a single write's function refused to commit (it rolled back, count included): the window filled up at the
   * last moment, so the request is counted alone (429, unless a new window began); or another request answered its
   * Idempotency-Key, so the request is counted with that answer read anew (a replay, or 409). Null when the write is
   * still to be done: the caller then takes `classic`. Any other failure is thrown back.
   */
  async recover(db: Db, err: unknown): Promise<{ response: unknown } | null> {
    const e = err as { code?: unknown; message?: unknown };
    if (e.code !== REFUSED || (e.message !== REFUSALS.spent && e.message !== REFUSALS.raced)) throw err;
    this.counted = false;
    if (e.message === REFUSALS.spent) {
      await this.count(db);
      return null;
    }
    const [row] = await db.run(ENVELOPE_ONLY, this.params());
    return this.settle(db, row!);
  }

  /**
   * Runs a single write's function (one round trip: its statement carries `params()`) and settles what it says of the
   * envelope: refusals are thrown (401, 429, 409), a stored answer comes back as `replay`, and `redo` says the write
   * rolled back and is still to be done (its request counted). The function's own failures are thrown as they come.
   */
  async run<P, R extends EnvelopeRow>(
    db: Db,
    stmt: Statement<P, R>,
    params: P,
  ): Promise<{ replay: unknown } | { row: R } | { redo: true }> {
    const rows = await db.run(stmt, params).catch((err: unknown) => err);
    if (!Array.isArray(rows)) {
      const replay = await this.recover(db, rows);
      return replay ? { replay: replay.response } : { redo: true };
    }
    const row = (rows as R[])[0]!;
    const replay = await this.settle(db, row);
    return replay ? { replay: replay.response } : { row };
  }

  /**
   * The path for writes that cannot be one statement (a score adjustment to queue, a name identity, a contact near its
   * organization's cap): counted first unless a statement already did, then `work` in the transaction that stores its
   * answer under the Idempotency-Key, or in a transaction of its own without one. `work` returns the operation's
   * answer, which is what is stored: a replay returns the answer stored by the same operation.
   */
  async classic<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
    await this.count(db);
    if (!this.idempotency) return db.transaction(work);
    const { key, hash } = this.idempotency;
    const run = await runIdempotent(db, { apiKeyId: this.o.keyId, key, hash, now: this.o.now }, work);
    if (!run.replayed) return run.result;
    this.replayed = true;
    return run.response as T;
  }
}
