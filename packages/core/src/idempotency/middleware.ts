import { createHash } from 'node:crypto';
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
const LOCK = `select pg_try_advisory_xact_lock(hashtextextended('idempotency:' || ?::text || ':' || ?::text, 0)) as locked`;
const READ = `select request_hash, response from idempotency_records where api_key_id = ? and key = ? and created_at > ?`;
/** An expired record of the same key is replaced. */
const STORE = `
insert into idempotency_records (api_key_id, key, request_hash, status, response, created_at) values (?, ?, ?, 200, ?::jsonb, ?)
on conflict (api_key_id, key) do update
set request_hash = excluded.request_hash, status = excluded.status, response = excluded.response, created_at = excluded.created_at`;

/** Canonical JSON (sorted keys), so the same body with keys in another order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestFingerprint(route: string, input: unknown, extra: string): string {
  return createHash('sha256').update(`${route}\n${extra}\n${canonical(input)}`).digest('hex');
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
      const [lock] = await tx.execute<{ locked: boolean }[]>(LOCK, [actor.apiKeyId, key]);
      if (!lock?.locked) throw errors.idempotencyInProgress();
      const [record] = await tx.execute<{ request_hash: string; response: unknown }[]>(READ, [
        actor.apiKeyId,
        key,
        new Date(now.getTime() - TTL_MS),
      ]);
      if (record) {
        if (record.request_hash !== hash) throw errors.idempotencyConflict();
        ctx.setHeader('idempotent-replayed', 'true');
        // A replay short-circuits the procedure; tRPC brands its result marker, hence the cast.
        return { ok: true, data: record.response, marker: 'middlewareMarker', ctx } as unknown as Result;
      }
      const result = await next({ ctx: { db: tx } });
      if (!result.ok) throw new Failed(result);
      await tx.execute(STORE, [actor.apiKeyId, key, hash, JSON.stringify(result.data ?? null), now]);
      return result;
    });
  } catch (err) {
    if (err instanceof Failed) return err.result as Result;
    throw err;
  }
});
