import type { Db, Role } from '@leadwire/db';
import type { Deps, RequestContext } from '../context.ts';
import { AppError, errors } from '../errors.ts';
import { INTERNAL_KEY_LIMITS } from '../limits/plans.ts';
import { keyGuardOf } from '../limits/key-guard.ts';
import { enforceRateLimits } from '../limits/rate-limit.ts';
import { readRouting } from '../replicas/routing.ts';
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
  deps: Pick<Deps, 'clock' | 'config'>,
  db: Db,
  header: (name: string) => string | undefined,
  setHeader: (name: string, value: string | number) => void,
): Promise<InternalActor> {
  const authorization = credentialHeader(header);
  const token = bearerToken(authorization);
  if (token?.startsWith(KEY_PREFIX)) {
    const now = deps.clock.now();
    const guard = keyGuardOf(deps);
    const auth = await authenticate(db, authorization, 'internal', { now, guard, setHeader });
    const { actor: key, window, dayWindow } = auth;
    const limits = INTERNAL_KEY_LIMITS[key.plan];
    enforceRateLimits(
      [...(window ? [{ window, limit: limits.perMinute }] : []), ...(dayWindow ? [{ window: dayWindow, limit: limits.perDay }] : [])],
      setHeader,
      now,
      { guard, key: auth.sighting },
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

/**
 * The credential as an `Authorization` value. REST-hook platforms (Zapier and the like) send the Internal key in
 * `X-Api-Key` instead (spec "Authentication" 9); it is read as `Bearer <key>` so that the very same checks, rate limits
 * and key guard apply. Two headers naming different credentials are refused rather than one silently chosen.
 */
function credentialHeader(header: (name: string) => string | undefined): string | undefined {
  const authorization = header('authorization');
  const apiKey = header('x-api-key')?.trim();
  if (apiKey === undefined || apiKey === '') return authorization;
  if (!apiKey.startsWith(KEY_PREFIX)) throw errors.unauthorized(`X-Api-Key takes an Internal API key (${KEY_PREFIX}...)`);
  if (authorization !== undefined && bearerToken(authorization) !== apiKey) {
    throw errors.unauthorized('Authorization and X-Api-Key carry different credentials; send one of them');
  }
  return `Bearer ${apiKey}`;
}

/**
 * The caller of an internal procedure. On typed RPC a browser's session cookie stands in for `Authorization: Bearer`
 * when no credential header is sent, once its CSRF checks pass; the session checks are then the bearer token's own.
 */
async function internalActor(ctx: RequestContext): Promise<InternalActor> {
  const setHeader = (name: string, value: string | number) => ctx.setHeader(name, value);
  const cookie = ctx.header('authorization') === undefined && ctx.header('x-api-key') === undefined ? ctx.sessionCookie : undefined;
  if (!cookie) return authenticateInternal(ctx.deps, ctx.db, (name) => ctx.header(name), setHeader);
  const token = cookie.token();
  try {
    // A cookie carries a session only: an API key put there is refused rather than honoured without its header.
    if (!token.startsWith(SESSION_PREFIX)) throw errors.unauthorized('The session cookie holds no session; sign in again');
    return await authenticateInternal(
      ctx.deps,
      ctx.db,
      (name) => (name === 'authorization' ? `Bearer ${token}` : ctx.header(name)),
      setHeader,
    );
  } catch (err) {
    // Only after the CSRF checks passed, so a forged request cannot make the browser drop its cookies.
    if (err instanceof AppError && err.code === 'unauthorized') cookie.ended();
    throw err;
  }
}

/** Procedures of the internal surface, authenticated by `internalActor`. */
export const internalProcedure = baseProcedure
  .meta({ auth: 'internal' })
  .use(async ({ ctx, next }) => next({ ctx: { ...ctx, actor: await internalActor(ctx) } }))
  .use(readRouting);

/** Refuses unless the actor holds one of `roles`. */
export function requireRole(actor: InternalActor, ...roles: Role[]): void {
  if (!roles.includes(actor.role)) {
    throw new AppError('forbidden_role', `This action needs the ${roles.join(' or ')} role`, { required: roles });
  }
}
