import type { AnyTRPCRouter } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ErrorCode } from '../errors.ts';
import type { LeadwireMeta } from '../trpc.ts';

export interface RestRoute {
  method: string;
  /** OpenAPI path template, e.g. `/contacts/{id}/notes`. */
  path: string;
  pattern: RegExp;
  procedure: string;
  successStatus: number;
  errorCodes: readonly ErrorCode[];
  permission: string | undefined;
  /** Other permissions that let a key call it (publicApiProcedure with a list); `permission` is the one refusals name. */
  alsoPermitted: readonly string[];
  type: 'query' | 'mutation';
  /** The middlewares the procedure runs, for the contract to read its wiring (authentication, rate limits). */
  middlewares: readonly unknown[];
}

/** The REST routes a router exposes, read from its OpenAPI meta: one source for routing checks and status codes. */
export function restRoutes(router: AnyTRPCRouter): RestRoute[] {
  const procedures = router._def.procedures as Record<
    string,
    { _def: { meta?: OpenApiMeta<LeadwireMeta>; type: 'query' | 'mutation' | 'subscription'; middlewares: readonly unknown[] } }
  >;
  return Object.entries(procedures).flatMap(([procedure, p]) => {
    const meta = p._def.meta;
    if (!meta?.openapi) return [];
    const { method, path } = meta.openapi;
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
    const { type, middlewares } = p._def;
    return [
      {
        method,
        path,
        pattern,
        procedure,
        successStatus: meta.successStatus ?? 200,
        errorCodes: meta.errorCodes ?? [],
        permission: meta.permission,
        alsoPermitted: meta.alsoPermitted ?? [],
        type: type === 'mutation' ? 'mutation' : 'query',
        middlewares,
      },
    ];
  });
}

export type RouteMatch = { kind: 'ok'; route: RestRoute } | { kind: 'method_not_allowed'; allow: string[] } | { kind: 'not_found' };

export function matchRoute(routes: readonly RestRoute[], method: string, pathname: string): RouteMatch {
  const onPath = routes.filter((r) => r.pattern.test(pathname));
  if (onPath.length === 0) return { kind: 'not_found' };
  // No HEAD alias: the REST adapter answers HEAD itself, before authentication, so HEAD is refused here.
  const route = onPath.find((r) => r.method === method);
  return route ? { kind: 'ok', route } : { kind: 'method_not_allowed', allow: onPath.map((r) => r.method) };
}
