import type { PublicPermission } from '@leadwire/db';
import { errors } from '../errors.ts';
import { PUBLIC_API_PER_MINUTE } from '../limits/plans.ts';
import { keyGuardOf } from '../limits/key-guard.ts';
import { idempotent, idempotentInOneTrip } from '../idempotency/middleware.ts';
import { readRouting } from '../replicas/routing.ts';
import { baseProcedure } from '../trpc.ts';
import { Envelope } from './envelope.ts';
import { resolvePublicKey } from './resolve-key.ts';

export interface PublicProcedureOptions {
  /**
   * The procedure counts the request, confirms the key and honours Idempotency-Key in its own statement
   * (`ctx.envelope`): one round trip for the whole write. Otherwise the request is counted before the procedure runs.
   */
  oneTrip?: boolean;
}

/**
 * Procedures of the public API v1: a Public API key, counted against 600 requests per minute, holding `permission`.
 * Auth runs before input parsing, so an anonymous caller learns nothing about the body rules. The key comes from the
 * process's memory (a key it has not seen is looked up once); the database confirms it by id in the statement that
 * counts the request, so a revoked or stopped key is refused on its next request in every process.
 *
 * `permission` may be a list: the key needs any one of them, and a refusal names the first. The operation then decides
 * what each one lets the key read (the changes feed: `events:read` every event, `contacts:read` the contact events).
 */
export function publicApiProcedure(
  permission: PublicPermission | readonly [PublicPermission, ...PublicPermission[]],
  opts: PublicProcedureOptions = {},
) {
  const [first, ...alternatives] = typeof permission === 'string' ? [permission] : permission;
  // Meta merges shallowly in tRPC, so the router's own .meta() keeps this permission.
  const meta = {
    auth: 'public' as const,
    permission: first,
    ...(alternatives.length ? { alsoPermitted: alternatives } : {}),
    ...(opts.oneTrip ? { oneTrip: true } : {}),
  };
  const authenticated = baseProcedure.meta(meta).use(async ({ ctx, next }) => {
    const now = ctx.deps.clock.now();
    const guard = keyGuardOf(ctx.deps);
    const { actor, sighting } = await resolvePublicKey(ctx.db, ctx.header('authorization'), { now, guard, setHeader: ctx.setHeader });
    const envelope = new Envelope({
      keyId: actor.apiKeyId,
      surface: 'public',
      limit: PUBLIC_API_PER_MINUTE,
      now,
      guard,
      sighting,
      setHeader: ctx.setHeader,
    });
    if (!actor.permissions.includes(first) && !alternatives.some((p) => actor.permissions.includes(p))) {
      // Counted like every request of a key that stands; a spent window answers 429 first, as it always has.
      await envelope.count(ctx.db);
      throw errors.insufficientScope(first);
    }
    if (!opts.oneTrip) await envelope.count(ctx.db);
    const result = await next({ ctx: { ...ctx, actor, envelope } });
    // Refused before it reached the database (its input, X-Source, the identity rule): counted now, and a spent window
    // still answers 429 rather than the refusal, as when the count came first.
    if (!envelope.counted && !envelope.attempted) await envelope.count(ctx.db);
    return result;
  });
  return authenticated.use(readRouting);
}

/** Writes of the public API: as above, plus `Idempotency-Key` replay. */
export function publicApiMutation(permission: PublicPermission, opts: PublicProcedureOptions = {}) {
  return publicApiProcedure(permission, opts).use(opts.oneTrip ? idempotentInOneTrip : idempotent);
}
