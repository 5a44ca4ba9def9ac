import type { PublicPermission } from '@leadwire/db';
import { errors } from '../errors.ts';
import { PUBLIC_API_PER_MINUTE } from '../limits/plans.ts';
import { apiUsageOf, outcomeOfError } from '../limits/api-usage.ts';
import { keyGuardOf } from '../limits/key-guard.ts';
import { enforceRateLimits } from '../limits/rate-limit.ts';
import { idempotent } from '../idempotency/middleware.ts';
import { baseProcedure } from '../trpc.ts';
import { authenticate } from './authenticate.ts';

/**
 * Procedures of the public API v1: a Public API key, counted against 600 requests per minute, holding `permission`.
 * Auth runs before input parsing, so an anonymous caller learns nothing about the body rules.
 *
 * `permission` may be a list: the key needs any one of them, and a refusal names the first. The operation then decides
 * what each one lets the key read (the changes feed: `events:read` every event, `contacts:read` the contact events).
 */
export function publicApiProcedure(permission: PublicPermission | readonly [PublicPermission, ...PublicPermission[]]) {
  const [first, ...alternatives] = typeof permission === 'string' ? [permission] : permission;
  // Meta merges shallowly in tRPC, so the router's own .meta() keeps this permission.
  const meta = { auth: 'public' as const, permission: first, ...(alternatives.length ? { alsoPermitted: alternatives } : {}) };
  return baseProcedure.meta(meta).use(async ({ ctx, next }) => {
    const now = ctx.deps.clock.now();
    const guard = keyGuardOf(ctx.deps);
    const auth = await authenticate(ctx.db, ctx.header('authorization'), 'public', { now, guard, setHeader: ctx.setHeader });
    const { actor, window } = auth;
    // The overview's request counts (issue 27 keeps the write path's SQL to itself): a Map increment per answer, no
    // statement; the tally is written apart, every few seconds (limits/api-usage.ts).
    const tally = apiUsageOf(ctx.deps);
    const caller = { orgId: actor.orgId, keyId: actor.apiKeyId };
    try {
      if (window) enforceRateLimits([{ window, limit: PUBLIC_API_PER_MINUTE }], ctx.setHeader, now, { guard, key: auth.sighting });
      if (!actor.permissions.includes(first) && !alternatives.some((p) => actor.permissions.includes(p))) {
        throw errors.insufficientScope(first);
      }
    } catch (err) {
      tally.count(caller, outcomeOfError(err), now);
      throw err;
    }
    const result = await next({ ctx: { ...ctx, actor } });
    tally.count(caller, result.ok ? '2xx' : outcomeOfError(result.error), now);
    return result;
  });
}

/** Writes of the public API: as above, plus `Idempotency-Key` replay. */
export function publicApiMutation(permission: PublicPermission) {
  return publicApiProcedure(permission).use(idempotent);
}
