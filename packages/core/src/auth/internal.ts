import type { Role } from '@leadwire/db';
import { AppError, errors } from '../errors.ts';
import { INTERNAL_KEY_LIMITS } from '../limits/plans.ts';
import { enforceRateLimits } from '../limits/rate-limit.ts';
import { baseProcedure } from '../trpc.ts';
import type { InternalActor } from './actor.ts';
import { authenticate } from './authenticate.ts';
import { bearerToken, KEY_PREFIX } from './key-material.ts';
import { findSession, SESSION_PREFIX } from './sessions.ts';

/**
 * Procedures of the internal surface: a session or an Internal key (which acts as the user who created it). Internal
 * keys are counted against their plan's per-minute and per-day limits; a Public API key is refused as the wrong surface.
 */
export const internalProcedure = baseProcedure.use(async ({ ctx, next }) => {
  const header = ctx.header('authorization');
  const token = bearerToken(header);
  let actor: InternalActor;
  if (token?.startsWith(KEY_PREFIX)) {
    const { actor: key, window, dayWindow } = await authenticate(ctx.em, header, 'internal');
    const limits = INTERNAL_KEY_LIMITS[key.plan];
    enforceRateLimits(
      [
        ...(window ? [{ window, limit: limits.perMinute }] : []),
        ...(dayWindow ? [{ window: dayWindow, limit: limits.perDay }] : []),
      ],
      ctx.setHeader,
    );
    actor = { ...key, via: 'internal_key', sessionId: null, apiKeyId: key.apiKeyId };
  } else if (token?.startsWith(SESSION_PREFIX)) {
    const session = await findSession(ctx.em, token);
    if (!session) throw errors.unauthorized('Session expired or signed out; sign in again');
    actor = session;
  } else {
    throw errors.unauthorized('Missing credentials: send Authorization: Bearer <session token or Internal API key>');
  }
  return next({ ctx: { ...ctx, actor } });
});

/** Refuses unless the actor holds one of `roles`. */
export function requireRole(actor: InternalActor, ...roles: Role[]): void {
  if (!roles.includes(actor.role)) {
    throw new AppError(403, 'forbidden_role', `This action needs the ${roles.join(' or ')} role`, { required: roles });
  }
}
