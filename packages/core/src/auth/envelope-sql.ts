import {
  type ApiKeyType,
  type CommitBy,
  type DB,
  type Expression,
  type ExpressionBuilder,
  expressionBuilder,
  qb,
  type QueryCreator,
  sql,
  statement,
} from '@leadwire/db';

/**
 * The envelope of a /v1 request as common table expressions, for a write to fold into its own statement (one round
 * trip, one transaction) or to run alone. The key was resolved from memory (auth/resolve-key.ts), so the database
 * confirms it by id here, on every request, as it confirmed it by hash before: a key revoked, expired or stopped by its
 * owner (deactivated, credentials changed) is refused on its very next request in every process, whatever a process
 * remembers and whenever it hears of the change.
 *
 *   k       the key, if it still stands (and is of the surface asked for)
 *   seen    the key's count in the current window as this statement's snapshot sees it (no lock)
 *   lock    Idempotency-Key: the advisory lock a running request holds on it (a duplicate is told so at once)
 *   prior   Idempotency-Key: the stored answer, in this statement's snapshot
 *   ok      one row when the request may write: the key stands, the window had room, the key's lock is held and no
 *           answer is stored
 * and, after the statement's writes (`countAfter`):
 *   hit     the request counted in the key's window: the one count every process shares
 *   touch   last_used_at, at most once a minute
 *
 * The count comes last so that the counter's row is locked from then to the commit only, never while the write waits
 * (on a contact another request writes, on a lock a test holds): a key's other requests, its reads and a duplicate
 * that must be told "in progress" at once never queue behind its slow write. `seen` keeps a refused request from
 * writing at all; two requests that both saw the last free place are told apart by `hit`, and the one counted past the
 * limit is rolled back (`refusal`, then the caller counts it alone). Time comes in as parameters from the caller's clock.
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
  /** The request's Idempotency-Key, null without one. */
  idemKey: string | null;
  /** Stored answers created after this are replayed (24 hours). */
  idemSince: Date;
  /** Filled in by the database layer: past it, on the server's clock, the statement must not commit (COMMIT_BY). */
  commitBy: CommitBy;
}

type WindowParams = Omit<EnvelopeParams, 'idemKey' | 'idemSince' | 'commitBy'>;

const ONE = sql.lit(1).as('one');
const counters = expressionBuilder<DB, 'rate_limit_counters'>();
const bumpCount = { count: counters(counters.ref('rate_limit_counters.count'), '+', sql.lit(1)) };
const bucketOf = (keyId: unknown) => sql<string>`'key:' || ${keyId}`;

/** The advisory lock of an Idempotency-Key: the same key the transaction path takes (idempotency/transaction.ts). */
const idempotencyLockKey = (apiKeyId: unknown, key: unknown) =>
  sql<string>`hashtextextended('idempotency:' || ${apiKeyId}::text || ':' || ${key}::text, 0)`;

/** The key, if it still stands. */
function confirmedKey(p: WindowParams) {
  return qb.with('k', (db) =>
    db
      .selectFrom('api_keys as k')
      .innerJoin('users as u', 'u.id', 'k.created_by_id')
      .select(['k.id', 'k.type'])
      .where('k.id', '=', p.keyId)
      .where('k.type', '=', p.surface)
      .where('k.revoked_at', 'is', null)
      .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', sql<Date>`${p.now}::timestamptz`)]))
      .where((eb) => eb.ref('u.active'))
      .whereRef('u.credential_epoch', '=', 'k.owner_epoch'),
  );
}

/** A statement's builder once `k` is among its expressions. */
type WithKey = QueryCreator<DB & { k: { id: string; type: ApiKeyType } }>;

/** `insert into rate_limit_counters` of the key's request; with `after`, only once that (a count of writes) is known. */
function hitOf(db: WithKey, p: WindowParams, after?: Expression<unknown>) {
  const from = db
    .selectFrom('k')
    .select((eb) => [
      bucketOf(eb.ref('k.id')).as('bucket'),
      sql<Date>`${p.minute}::timestamptz`.as('window_start'),
      sql.lit(1).as('count'),
    ]);
  return db
    .insertInto('rate_limit_counters')
    .columns(['bucket', 'window_start', 'count'])
    .expression(after ? from.where(sql<boolean>`${after} >= 0`) : from)
    .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet(bumpCount))
    .returning('count');
}

/**
 * last_used_at, at most once a minute, and never waiting: a row another request is stamping is left to it (`skip
 * locked`), so no request of a key waits on another's transaction for this.
 */
function touchOf(db: WithKey, p: WindowParams) {
  return db
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
    );
}

/** The envelope's expressions before a write; the statement chains its own after them, then `countAfter`. */
export function envelope(p: EnvelopeParams) {
  return confirmedKey(p)
    .with('seen', (db) =>
      db
        .selectFrom('rate_limit_counters as c')
        .select('c.count')
        .where('c.bucket', '=', bucketOf(sql`${p.keyId}::uuid`))
        .where('c.window_start', '=', sql<Date>`${p.minute}::timestamptz`),
    )
    .with('room', (db) =>
      db
        .selectFrom('k')
        .select(ONE)
        .where((eb) => eb.not(eb.exists(db.selectFrom('seen').select(ONE).where('seen.count', '>=', sql<number>`${p.limit}::int`)))),
    )
    .with('lock', (db) =>
      db
        .selectFrom('room')
        .select(sql<boolean>`pg_try_advisory_xact_lock(${idempotencyLockKey(p.keyId, p.idemKey)})`.as('locked'))
        .where(sql<boolean>`${p.idemKey}::text is not null`),
    )
    .with('prior', (db) =>
      db
        .selectFrom('idempotency_records as r')
        .select(['r.request_hash', 'r.response'])
        .where('r.api_key_id', '=', sql<string>`${p.keyId}::uuid`)
        .where('r.key', '=', sql<string>`${p.idemKey}::text`)
        .where('r.created_at', '>', sql<Date>`${p.idemSince}::timestamptz`),
    )
    .with('ok', (db) =>
      db
        .selectFrom('room')
        .select(ONE)
        .where((eb) =>
          eb.or([
            sql<boolean>`${p.idemKey}::text is null`,
            eb.and([
              eb.exists(
                db
                  .selectFrom('lock')
                  .select(ONE)
                  .where((w) => w.ref('lock.locked')),
              ),
              eb.not(eb.exists(db.selectFrom('prior').select(ONE))),
            ]),
          ]),
        ),
    );
}

/** The count and the stamp, as expressions of a statement whose writes `after` counts (so they come first). */
export const countAfter = (db: WithKey, p: EnvelopeParams, after: Expression<unknown>) => hitOf(db, p, after);
export const touchAfter = (db: WithKey, p: EnvelopeParams) => touchOf(db, p);

/** The envelope's tables, as a statement's main select sees them. */
type EnvelopeTables = {
  k: { id: string; type: ApiKeyType };
  hit: { count: number };
  lock: { locked: boolean };
  prior: { request_hash: string; response: unknown };
};

/** What every enveloped statement answers beside its own columns (an `EnvelopeRow`), from its main select's builder. */
export const envelopeColumns = <E extends ExpressionBuilder<EnvelopeTables, never>>(eb: E) => [
  eb.exists(eb.selectFrom('k').select(ONE)).$castTo<boolean>().as('key_ok'),
  eb.selectFrom('hit').select('hit.count').as('hits'),
  eb.selectFrom('lock').select('lock.locked').as('locked'),
  eb.selectFrom('prior').select('prior.request_hash').as('prior_hash'),
  eb.selectFrom('prior').select('prior.response').as('prior_response'),
];

/** Why an enveloped statement refuses to commit (the message of its SQLSTATE LW001 failure). */
export const REFUSALS = {
  /** Its client has stopped waiting for it (the server was stalled): nothing of it may happen after "failed". */
  late: 'statement_past_deadline',
  /** Another request with the same Idempotency-Key committed after this statement's snapshot. */
  raced: 'idempotency_key_answered_meanwhile',
  /** The key's window filled up between `seen` and `hit`: the write is rolled back, the request counted alone. */
  spent: 'window_spent_meanwhile',
} as const;

/**
 * The statement's last word: fails it (rolling everything back) when it must not commit. `wrote` says whether it wrote
 * anything of its own, `stored` whether it stored its answer under its Idempotency-Key.
 */
export function refusal(p: EnvelopeParams, wrote: Expression<boolean>, stored: Expression<boolean>) {
  return sql<null>`case
    when ${p.commitBy}::timestamptz < clock_timestamp() then leadwire_refuse(${sql.lit(REFUSALS.late)})
    when ${wrote} and (select hit.count from hit) > ${p.limit}::int then leadwire_refuse(${sql.lit(REFUSALS.spent)})
    when ${wrote} and ${p.idemKey}::text is not null and not ${stored} then leadwire_refuse(${sql.lit(REFUSALS.raced)})
  end`.as('refused');
}

/**
 * The request counted alone, the key confirmed by id: for the requests that do not fold the count into a statement of
 * their own (reads, and writes that refuse before they reach the database). One row when the key stands.
 */
export const COUNT_REQUEST = statement<WindowParams>()((p) =>
  confirmedKey(p)
    .with('hit', (db) => hitOf(db, p))
    .with('touch', (db) => touchOf(db, p))
    .selectFrom('k')
    .select((eb) => [eb.selectFrom('hit').select('hit.count').as('hits')]),
);

/**
 * The envelope with no write: what a request that lost the race for its Idempotency-Key reads once the other one has
 * committed (a statement of its own, so a snapshot that sees it), counted like any other request.
 */
export const ENVELOPE_ONLY = statement<EnvelopeParams>()((p) =>
  envelope(p)
    .with('hit', (db) => hitOf(db, p))
    .with('touch', (db) => touchOf(db, p))
    .selectNoFrom((eb) => envelopeColumns(eb)),
);
