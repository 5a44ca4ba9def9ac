import { createHash } from 'node:crypto';
import { type Db, qb, sql, statement } from '@leadwire/db';
import { errors } from '../errors.ts';

/** How long a stored response is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * Held by the request that is running under a key, for as long as its transaction: a duplicate arriving meanwhile is
 * told so at once, and a request that dies takes its lock with its connection. The prefix keeps these keys apart from
 * the other advisory locks (hashed identities of the upsert); the single write's one statement takes the same lock
 * (auth/envelope-sql.ts).
 */
const LOCK = statement<{ apiKeyId: string; key: string }>()((p) =>
  qb.selectNoFrom(
    sql<boolean>`pg_try_advisory_xact_lock(hashtextextended('idempotency:' || ${p.apiKeyId}::text || ':' || ${p.key}::text, 0))`.as(
      'locked',
    ),
  ),
);
const READ = statement<{ apiKeyId: string; key: string; since: Date }>()((p) =>
  qb
    .selectFrom('idempotency_records')
    .select(['request_hash', 'response'])
    .where('api_key_id', '=', p.apiKeyId)
    .where('key', '=', p.key)
    .where('created_at', '>', p.since),
);
/** An expired record of the same key is replaced. */
const STORE = statement<{ apiKeyId: string; key: string; hash: string; response: string; now: Date }>()((p) =>
  qb
    .insertInto('idempotency_records')
    .values({
      api_key_id: p.apiKeyId,
      key: p.key,
      request_hash: p.hash,
      status: sql.lit(200),
      response: sql`${p.response}::jsonb`,
      created_at: p.now,
    })
    .onConflict((oc) =>
      oc.columns(['api_key_id', 'key']).doUpdateSet((eb) => ({
        request_hash: eb.ref('excluded.request_hash'),
        status: eb.ref('excluded.status'),
        response: eb.ref('excluded.response'),
        created_at: eb.ref('excluded.created_at'),
      })),
    ),
);

/** Canonical JSON (sorted keys), so the same body with keys in another order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestFingerprint(route: string, input: unknown, extra: string): string {
  return createHash('sha256')
    .update(`${route}\n${extra}\n${canonical(input)}`)
    .digest('hex');
}

/** The request's Idempotency-Key, checked; undefined without one. */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!KEY_PATTERN.test(header)) {
    throw errors.validation([{ path: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' }]);
  }
  return header;
}

/** A request under an Idempotency-Key: whose key, which value, the request's fingerprint, and the time it arrived. */
export interface IdempotentRequest {
  apiKeyId: string;
  key: string;
  hash: string;
  now: Date;
}

/** Carries a result that must not be stored out of the transaction, which rolls back on the way. */
export class NotStored<T> extends Error {
  readonly result: T;
  constructor(result: T) {
    super('the work failed; its transaction is rolled back');
    this.result = result;
  }
}

/**
 * Runs `work` in the transaction that stores its answer, so the write and its record commit together or not at all:
 * after a crash at any point a retry either replays the committed answer or runs a write that never happened, at once.
 * The stored answer of an earlier request with the same key is returned instead (`replayed`); the same key with another
 * request is a 409, and a duplicate still running a 409 too. `work` throws `NotStored` to roll back and answer anyway.
 */
export async function runIdempotent<T>(
  db: Db,
  r: IdempotentRequest,
  work: (tx: Db) => Promise<T>,
  answerOf: (result: T) => unknown = (result) => result,
): Promise<{ replayed: true; response: unknown } | { replayed: false; result: T }> {
  return db.transaction(async (tx) => {
    const [lock] = await tx.run(LOCK, { apiKeyId: r.apiKeyId, key: r.key });
    if (!lock?.locked) throw errors.idempotencyInProgress();
    const [record] = await tx.run(READ, { apiKeyId: r.apiKeyId, key: r.key, since: new Date(r.now.getTime() - IDEMPOTENCY_TTL_MS) });
    if (record) {
      if (record.request_hash !== r.hash) throw errors.idempotencyConflict();
      return { replayed: true as const, response: record.response };
    }
    const result = await work(tx);
    await tx.run(STORE, { apiKeyId: r.apiKeyId, key: r.key, hash: r.hash, response: JSON.stringify(answerOf(result) ?? null), now: r.now });
    return { replayed: false as const, result };
  });
}
