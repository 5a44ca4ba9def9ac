import { middleware } from '../trpc.ts';
import { idempotencyKeyOf, NotStored, requestFingerprint, runIdempotent } from './transaction.ts';

export { requestFingerprint } from './transaction.ts';

/**
 * `Idempotency-Key` on POST: the first response is stored and replayed for 24 hours to retries with the same key and
 * the same request; the same key with another request is a 409. Keys are scoped to the API key that sent them.
 *
 * The procedure runs inside the transaction that stores its answer (`ctx.db` is that transaction; the services'
 * own transactions join it), so the write and its record commit together or not at all (runIdempotent). Failures roll
 * back and store nothing, so a corrected retry runs.
 */
export const idempotent = middleware(async ({ ctx, next, path, getRawInput }) => {
  const actor = (ctx as { actor?: { apiKeyId: string } }).actor;
  const key = actor ? idempotencyKeyOf(ctx.header('idempotency-key')) : undefined;
  if (key === undefined || !actor) return next();
  const hash = requestFingerprint(path, await getRawInput(), ctx.header('x-source') ?? '');
  type Result = Awaited<ReturnType<typeof next>>;
  try {
    const run = await runIdempotent(
      ctx.deps.db,
      { apiKeyId: actor.apiKeyId, key, hash, now: ctx.deps.clock.now() },
      async (tx): Promise<Result> => {
        const result = await next({ ctx: { db: tx } });
        if (!result.ok) throw new NotStored(result);
        return result;
      },
      (result) => (result.ok ? result.data : null),
    );
    if (!run.replayed) return run.result;
    ctx.setHeader('idempotent-replayed', 'true');
    // A replay short-circuits the procedure; tRPC brands its result marker, hence the cast.
    return { ok: true, data: run.response, marker: 'middlewareMarker', ctx } as unknown as Result;
  } catch (err) {
    if (err instanceof NotStored) return err.result as Result;
    throw err;
  }
});

/**
 * `Idempotency-Key` for writes that take it into their own statement (the single upsert's one round trip): the key and
 * the request's fingerprint go to the procedure in its envelope, which locks, replays or stores the answer in that
 * statement (or, on the path that needs a transaction, through runIdempotent). Nothing is opened here.
 */
export const idempotentInOneTrip = middleware(async ({ ctx, next, path, getRawInput }) => {
  const envelope = (ctx as { envelope?: { idempotency: { key: string; hash: string } | null; replayed: boolean } }).envelope;
  const key = envelope ? idempotencyKeyOf(ctx.header('idempotency-key')) : undefined;
  if (key === undefined || !envelope) return next();
  envelope.idempotency = { key, hash: requestFingerprint(path, await getRawInput(), ctx.header('x-source') ?? '') };
  const result = await next();
  if (envelope.replayed) ctx.setHeader('idempotent-replayed', 'true');
  return result;
});
