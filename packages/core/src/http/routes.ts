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
  /** The input's field names (path and query parameters of a GET), or null when its schema takes any key. */
  inputKeys: ReadonlySet<string> | null;
}

/** The minimum of zod's internals the key walk reads. */
interface ZodLike {
  _zod?: {
    def: {
      type: string;
      shape?: Record<string, unknown>;
      catchall?: ZodLike;
      in?: ZodLike;
      innerType?: ZodLike;
      options?: ZodLike[];
      left?: ZodLike;
      right?: ZodLike;
    };
  };
}

/**
 * The field names an input schema accepts, or null when it takes any (a record, a catch-all, a schema this walk does
 * not know): a route whose keys cannot be listed is never made strict by mistake.
 */
export function inputKeysOf(schemas: readonly unknown[]): ReadonlySet<string> | null {
  const keys = new Set<string>();
  const walk = (s: ZodLike | undefined): boolean => {
    const def = s?._zod?.def;
    if (!def) return false;
    switch (def.type) {
      case 'object':
        if (def.catchall && def.catchall._zod?.def.type !== 'never') return false;
        for (const k of Object.keys(def.shape ?? {})) keys.add(k);
        return true;
      case 'void':
      case 'undefined':
        return true;
      case 'pipe':
        return walk(def.in);
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'readonly':
      case 'catch':
        return walk(def.innerType);
      case 'union':
        return (def.options ?? []).every(walk);
      case 'intersection':
        return walk(def.left) && walk(def.right);
      default:
        return false;
    }
  };
  return schemas.every((s) => walk(s as ZodLike)) ? keys : null;
}

/** The query parameters of `query` that `route` does not take, in the order sent. */
export function unknownQueryKeys(route: RestRoute, query: Record<string, unknown>): string[] {
  const allowed = route.inputKeys;
  return allowed ? Object.keys(query).filter((k) => !allowed.has(k)) : [];
}

/** The REST routes a router exposes, read from its OpenAPI meta: one source for routing checks and status codes. */
export function restRoutes(router: AnyTRPCRouter): RestRoute[] {
  const procedures = router._def.procedures as Record<
    string,
    {
      _def: {
        meta?: OpenApiMeta<LeadwireMeta>;
        type: 'query' | 'mutation' | 'subscription';
        middlewares: readonly unknown[];
        inputs: readonly unknown[];
      };
    }
  >;
  return Object.entries(procedures).flatMap(([procedure, p]) => {
    const meta = p._def.meta;
    if (!meta?.openapi) return [];
    const { method, path } = meta.openapi;
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
    const { type, middlewares, inputs } = p._def;
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
        inputKeys: inputKeysOf(inputs),
      },
    ];
  });
}

export type RouteMatch = { kind: 'ok'; route: RestRoute } | { kind: 'method_not_allowed'; allow: string[] } | { kind: 'not_found' };

export function matchRoute(routes: readonly RestRoute[], method: string, pathname: string): RouteMatch {
  const matching = routes.filter((r) => r.pattern.test(pathname));
  if (matching.length === 0) return { kind: 'not_found' };
  // A path without parameters wins over a template (as OpenAPI reads paths): `GET /contacts/upsert` is the upsert's
  // wrong method, not the contact with id "upsert", and `/contacts/search` is the search whatever the router's order.
  const concrete = matching.filter((r) => !r.path.includes('{'));
  const onPath = concrete.length > 0 ? concrete : matching;
  // No HEAD alias: the REST adapter answers HEAD itself, before authentication, so HEAD is refused here.
  const route = onPath.find((r) => r.method === method);
  return route ? { kind: 'ok', route } : { kind: 'method_not_allowed', allow: onPath.map((r) => r.method) };
}
