import { createHash } from 'node:crypto';
import type { Db } from '@leadwire/db';
import { errors } from '../errors.ts';
import { middleware } from '../trpc.ts';

/** How long a stored response is replayed. */
const TTL = '24 hours';
/**
 * A record still marked in progress after this long belongs to a request that died mid-way (process killed); the
 * retry may then run again, which our natural-key upserts make safe.
 */
const ABANDONED_AFTER = '1 minute';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const CLAIM = `
insert into idempotency_records as r (api_key_id, key, request_hash, status, response, created_at)
values (?, ?, ?, null, null, now())
on conflict (api_key_id, key) do update set request_hash = excluded.request_hash, status = null, response = null,
  created_at = now()
where r.created_at < now() - interval '${TTL}' or (r.status is null and r.created_at < now() - interval '${ABANDONED_AFTER}')
returning true as claimed`;
const READ = `select request_hash, status, response from idempotency_records where api_key_id = ? and key = ?`;
const COMPLETE = `update idempotency_records set status = ?, response = ?::jsonb where api_key_id = ? and key = ?`;
const RELEASE = `delete from idempotency_records where api_key_id = ? and key = ? and status is null`;

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

/** Releases a claimed key so that a retry after a failure runs the request again. */
async function release(db: Db, keyId: string, key: string) {
  await db.execute(RELEASE, [keyId, key]);
}

/**
 * `Idempotency-Key` on POST: the first response is stored and replayed for 24 hours to retries with the same key and
 * the same request; the same key with another request is a 409. Failures are not stored, so a corrected retry runs.
 * Keys are scoped to the API key that sent them.
 */
export const idempotent = middleware(async ({ ctx, next, path, getRawInput }) => {
  const key = ctx.header('idempotency-key');
  const actor = (ctx as { actor?: { apiKeyId: string } }).actor;
  if (key === undefined || !actor) return next();
  if (!KEY_PATTERN.test(key)) {
    throw errors.validation([{ path: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' }]);
  }
  const hash = requestFingerprint(path, await getRawInput(), ctx.header('x-source') ?? '');
  const db = ctx.db;
  const claimed = await db.execute<{ claimed: boolean }[]>(CLAIM, [actor.apiKeyId, key, hash]);
  if (claimed.length === 0) {
    const [record] = await db.execute<{ request_hash: string; status: number | null; response: unknown }[]>(READ, [
      actor.apiKeyId,
      key,
    ]);
    if (record && record.request_hash !== hash) throw errors.idempotencyConflict();
    if (!record || record.status === null) throw errors.idempotencyInProgress();
    ctx.setHeader('idempotent-replayed', 'true');
    // A replay short-circuits the procedure; tRPC brands its result marker, hence the cast.
    const replay = { ok: true, data: record.response, marker: 'middlewareMarker', ctx };
    return replay as unknown as Awaited<ReturnType<typeof next>>;
  }
  const result = await next();
  if (result.ok) await db.execute(COMPLETE, [200, JSON.stringify(result.data ?? null), actor.apiKeyId, key]);
  else await release(db, actor.apiKeyId, key);
  return result;
});
