import { createHash } from 'node:crypto';
import { qb, sql, statement } from '@leadwire/db';
import { errors } from '../errors.ts';
import { middleware } from '../trpc.ts';

/** How long a stored response is replayed. */
const TTL_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * Held by the request that is running under a key, for as long as its transaction: a duplicate arriving meanwhile is
 * told so at once, and a request that dies takes its lock with its connection. The prefix keeps these keys apart from
 * the other advisory locks (hashed identities of the upsert).
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

/** Carries a failed result out of the transaction, which rolls back on the way. */
class Failed extends Error {
  readonly result: unknown;
  constructor(result: unknown) {
    super('the procedure failed; its transaction is rolled back');
    this.result = result;
  }
}

/**
 * `Idempotency-Key` on POST: the first response is stored and replayed for 24 hours to retries with the same key and
 * the same request; the same key with another request is a 409. Keys are scoped to the API key that sent them.
 *
 * The procedure runs inside the transaction that stores its answer (`ctx.db` is that transaction; the services'
 * own transactions join it), so the write and its record commit together or not at all: after a crash at any point a
 * retry either replays the committed answer or runs a write that never happened, at once. Failures roll back and
 * store nothing, so a corrected retry runs.
 */
export const idempotent = middleware(async ({ ctx, next, path, getRawInput }) => {
  const key = ctx.header('idempotency-key');
  const actor = (ctx as { actor?: { apiKeyId: string } }).actor;
  if (key === undefined || !actor) return next();
  if (!KEY_PATTERN.test(key)) {
    throw errors.validation([{ path: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' }]);
  }
  const hash = requestFingerprint(path, await getRawInput(), ctx.header('x-source') ?? '');
  const now = ctx.deps.clock.now();
  type Result = Awaited<ReturnType<typeof next>>;
  try {
    return await ctx.deps.db.transaction(async (tx): Promise<Result> => {
      const [lock] = await tx.run(LOCK, { apiKeyId: actor.apiKeyId, key });
      if (!lock?.locked) throw errors.idempotencyInProgress();
      const [record] = await tx.run(READ, { apiKeyId: actor.apiKeyId, key, since: new Date(now.getTime() - TTL_MS) });
      if (record) {
        if (record.request_hash !== hash) throw errors.idempotencyConflict();
        ctx.setHeader('idempotent-replayed', 'true');
        // A replay short-circuits the procedure; tRPC brands its result marker, hence the cast.
        return { ok: true, data: record.response, marker: 'middlewareMarker', ctx } as unknown as Result;
      }
      const result = await next({ ctx: { db: tx } });
      if (!result.ok) throw new Failed(result);
      await tx.run(STORE, { apiKeyId: actor.apiKeyId, key, hash, response: JSON.stringify(result.data ?? null), now });
      return result;
    });
  } catch (err) {
    if (err instanceof Failed) return err.result as Result;
    throw err;
  }
});
