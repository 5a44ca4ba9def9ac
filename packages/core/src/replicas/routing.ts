import type { Db, ReplicaSet } from '@leadwire/db';
import type { RequestContext } from '../context.ts';
import { AppError } from '../errors.ts';
import { dbReads, replicaFallbacks } from '../metrics/registry.ts';
import { middleware } from '../trpc.ts';
import { REPLICA_READS, routeKeyOf } from './routes.ts';

/** What a procedure's middleware knows of its call: enough to route it. */
export interface RoutedCall {
  type: string;
  meta: Parameters<typeof routeKeyOf>[0];
}

type Result = { ok: true } | { ok: false; error: unknown };

/**
 * What the procedure threw that may be the replica's doing, or undefined. tRPC answers a refusal of its own (input
 * that does not parse: BAD_REQUEST) with its own code, and wraps anything else thrown in INTERNAL_SERVER_ERROR; of
 * those, an AppError is the service's own answer (not found, a bad cursor), the same on any server.
 */
function replicaFailure(result: Result): unknown {
  if (result.ok) return undefined;
  const e = result.error as { code?: unknown; cause?: unknown } | null;
  if (e?.code !== 'INTERNAL_SERVER_ERROR') return undefined;
  const cause = e.cause ?? e;
  return cause instanceof AppError ? undefined : cause;
}

/**
 * The read-db chooser, as a procedure middleware after authentication (which stays on the primary). A replica-safe
 * read (routes.ts) runs with `ctx.db` set to a replica the set chooses for `caller`; if it fails there for any reason
 * but a refusal (bad input, an AppError), it runs again on the primary, so that no caller sees an error because a
 * replica is slow, behind or down. A mutation that succeeded records the caller's write for read-your-writes.
 * Every other call runs untouched. Without replicas, nothing is done at all.
 *
 * `next(db)` continues the procedure, with `db` in place of `ctx.db` when given.
 */
export async function routeReads<R extends Result>(
  replicas: ReplicaSet | null,
  caller: string,
  call: RoutedCall,
  next: (db?: Db) => Promise<R>,
): Promise<R> {
  if (!replicas) return next();
  if (call.type === 'mutation') {
    const result = await next();
    if (result.ok) await replicas.wrote(caller);
    return result;
  }
  const route = routeKeyOf(call.meta);
  if (call.type !== 'query' || route === undefined || !REPLICA_READS.has(route)) return next();
  const choice = replicas.choose(caller);
  if (!choice.replica) {
    replicaFallbacks.inc({ reason: choice.fallback });
    dbReads.inc({ pool: 'primary' });
    return next();
  }
  const result = await next(choice.db);
  const failure = replicaFailure(result);
  if (failure === undefined) {
    dbReads.inc({ pool: choice.pool });
    return result;
  }
  replicas.readFailed(choice.pool, failure);
  replicaFallbacks.inc({ reason: 'read_failed' });
  dbReads.inc({ pool: 'primary' });
  return next();
}

/** Whose writes a read must see: the API key's or the session's (an Internal key acts as its user, but is its own caller). */
export function callerOf(actor: { apiKeyId: string | null; sessionId?: string | null }): string {
  return actor.sessionId ? `session:${actor.sessionId}` : `key:${actor.apiKeyId ?? ''}`;
}

/**
 * `routeReads` as the middleware both surfaces' procedure builders add after their authentication. It is built on the
 * base context so that one middleware serves both; the actor their authentication put beside it names the caller.
 */
export const readRouting = middleware(({ ctx, next, meta, type }) => {
  const actor = (ctx as RequestContext & { actor?: Parameters<typeof callerOf>[0] }).actor;
  if (!actor) return next();
  return routeReads(ctx.deps.replicas, callerOf(actor), { type, meta }, (db) => (db ? next({ ctx: { db } }) : next()));
});
