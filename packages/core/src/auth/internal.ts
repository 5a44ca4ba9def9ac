import type { Db, Role } from '@leadwire/db';
import type { Deps } from '../context.ts';
import { AppError, errors } from '../errors.ts';
import { INTERNAL_KEY_LIMITS } from '../limits/plans.ts';
import { enforceRateLimits } from '../limits/rate-limit.ts';
import { baseProcedure } from '../trpc.ts';
import type { InternalActor } from './actor.ts';
import { authenticate } from './authenticate.ts';
import { bearerToken, KEY_PREFIX } from './key-material.ts';
import { findSession, SESSION_PREFIX } from './sessions.ts';

/**
 * Authenticates a request to the internal surface: a session or an Internal key (which acts as the user who created
 * it). Internal keys are counted against their plan's per-minute and per-day limits; a Public API key is refused as the
 * wrong surface. Plain so that HTTP routes outside tRPC (multipart uploads, downloads) share it.
 */
export async function authenticateInternal(
  deps: Pick<Deps, 'clock'>,
  db: Db,
  header: (name: string) => string | undefined,
  setHeader: (name: string, value: string | number) => void,
): Promise<InternalActor> {
  const authorization = header('authorization');
  const token = bearerToken(authorization);
  if (token?.startsWith(KEY_PREFIX)) {
    const { actor: key, window, dayWindow } = await authenticate(db, authorization, 'internal');
    const limits = INTERNAL_KEY_LIMITS[key.plan];
    enforceRateLimits(
      [
        ...(window ? [{ window, limit: limits.perMinute }] : []),
        ...(dayWindow ? [{ window: dayWindow, limit: limits.perDay }] : []),
      ],
      setHeader,
    );
    return { ...key, via: 'internal_key', sessionId: null, apiKeyId: key.apiKeyId };
  }
  if (token?.startsWith(SESSION_PREFIX)) {
    const session = await findSession(db, token, deps.clock.now());
    if (!session) throw errors.unauthorized('Session expired or signed out; sign in again');
    return session;
  }
  throw errors.unauthorized('Missing credentials: send Authorization: Bearer <session token or Internal API key>');
}

/** Procedures of the internal surface, authenticated by `authenticateInternal`. */
export const internalProcedure = baseProcedure.use(async ({ ctx, next }) => {
  const actor = await authenticateInternal(
    ctx.deps,
    ctx.db,
    (name) => ctx.header(name),
    (name, value) => ctx.setHeader(name, value),
  );
  return next({ ctx: { ...ctx, actor } });
});

/** Refuses unless the actor holds one of `roles`. */
export function requireRole(actor: InternalActor, ...roles: Role[]): void {
  if (!roles.includes(actor.role)) {
    throw new AppError(403, 'forbidden_role', `This action needs the ${roles.join(' or ')} role`, { required: roles });
  }
}
