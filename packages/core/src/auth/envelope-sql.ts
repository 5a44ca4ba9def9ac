import { standingKeys } from './standing-keys.ts';
import { type ApiKeyType, type CommitBy, type DB, expressionBuilder, qb, sql, statement } from '@leadwire/db';

/**
 * The envelope of a /v1 request in the database: the key, which the process resolved from memory (auth/resolve-key.ts),
 * confirmed by id on every request as it was confirmed by hash before (a key revoked, expired or stopped by its owner
 * is refused on its very next request in every process, whatever a process remembers and whenever it hears of the
 * change); the request counted in the key's per-minute window, the one count every process shares; last_used_at,
 * at most once a minute. A single write folds all of it, with its Idempotency-Key, into its one call
 * (`leadwire_v1_open` and `leadwire_v1_close`, Migration20261128150000); everything else counts alone (COUNT_REQUEST).
 */
export interface EnvelopeParams {
  keyId: string;
  surface: ApiKeyType;
  now: Date;
  /** Start of the current one-minute window. */
  minute: Date;
  /** now less a minute: last_used_at older than this is stamped again. */
  minuteAgo: Date;
  /** Requests the window allows. */
  limit: number;
}

/** What a single write's function takes of its envelope. */
export interface EnvelopeCall extends EnvelopeParams {
  /** The request's Idempotency-Key, null without one; its fingerprint; answers stored after `idemSince` replay. */
  idemKey: string | null;
  idemHash: string | null;
  idemSince: Date;
  /** Filled in by the database layer: past it, on the server's clock, the call must not commit (COMMIT_BY). */
  commitBy: CommitBy;
  /** Whether to stamp last_used_at (the process has not, for this key, in the last minute). */
  touch: boolean;
}

const ONE = sql.lit(1).as('one');

/** The envelope's arguments of a single write's function, in the order every one of them takes them. */
export const envelopeArguments = (p: EnvelopeCall) =>
  sql`${p.keyId}::uuid, ${p.now}::timestamptz, ${p.minute}::timestamptz, ${p.minuteAgo}::timestamptz, ${p.limit}::int, ${p.idemKey}::text,
    ${p.idemHash}::text, ${p.idemSince}::timestamptz, ${p.commitBy}::timestamptz, ${p.touch}::boolean`;
const counters = expressionBuilder<DB, 'rate_limit_counters'>();
const bumpCount = { count: counters(counters.ref('rate_limit_counters.count'), '+', sql.lit(1)) };

/**
 * The request counted alone, the key confirmed by id: for the requests that do not fold the count into a write of
 * their own (reads, and writes refused before they reach the database). One row when the key stands. last_used_at
 * is stamped at most once a minute, and never by waiting: a row another request is stamping is left to it.
 */
export const COUNT_REQUEST = statement<EnvelopeParams>()((p) =>
  qb
    .with('k', () => standingKeys(p.now).select(['k.id']).where('k.id', '=', p.keyId).where('k.type', '=', p.surface))
    .with('hit', (db) =>
      db
        .insertInto('rate_limit_counters')
        .columns(['bucket', 'window_start', 'count'])
        .expression(
          db
            .selectFrom('k')
            .select((eb) => [
              sql<string>`'key:' || ${eb.ref('k.id')}`.as('bucket'),
              sql<Date>`${p.minute}::timestamptz`.as('window_start'),
              sql.lit(1).as('count'),
            ]),
        )
        .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet(bumpCount))
        .returning('count'),
    )
    .with('touch', (db) =>
      db
        .updateTable('api_keys')
        .set({ last_used_at: sql<Date>`${p.now}::timestamptz` })
        .where('id', '=', (eb) =>
          eb
            .selectFrom('api_keys as t')
            .select('t.id')
            .where('t.id', '=', p.keyId)
            .where((w) => w.exists(w.selectFrom('k').select(ONE)))
            .where((w) => w.or([w('t.last_used_at', 'is', null), w('t.last_used_at', '<', sql<Date>`${p.minuteAgo}::timestamptz`)]))
            .forUpdate()
            .skipLocked(),
        ),
    )
    .selectFrom('k')
    .select((eb) => [eb.selectFrom('hit').select('hit.count').as('hits')]),
);

/** What a single write's function answers about its envelope. */
export interface EnvelopeRow {
  key_ok: boolean;
  hits: number | null;
  locked: boolean | null;
  prior_hash: string | null;
  prior_response: unknown;
}

/**
 * The envelope with no write: how a request whose write was rolled back reads its Idempotency-Key's answer in a new
 * snapshot (a replay, or "in progress"), counted like any other request.
 */
export const ENVELOPE_ONLY = statement<EnvelopeCall>()((p) =>
  qb
    .selectFrom(
      sql<
        EnvelopeRow & { go: boolean }
      >`leadwire_v1_open(${p.keyId}::uuid, ${p.now}::timestamptz, ${p.minute}::timestamptz, ${p.limit}::int,
        ${p.idemKey}::text, ${p.idemSince}::timestamptz)`.as('o'),
    )
    .select([
      'o.key_ok',
      'o.locked',
      'o.prior_hash',
      'o.prior_response',
      sql<number | null>`case when o.key_ok then (select c.hits from leadwire_v1_close(${p.keyId}::uuid, ${p.now}::timestamptz,
        ${p.minute}::timestamptz, ${p.minuteAgo}::timestamptz, ${p.limit}::int, false, ${p.touch}::boolean, ${p.commitBy}::timestamptz) c) end`.as(
        'hits',
      ),
    ]),
);
