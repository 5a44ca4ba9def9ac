import type { AnyTRPCRouter } from '@trpc/server';
import { forEachOpenApiProcedure, getInputOutputParsers, instanceofZodTypeLikeVoid, unwrapZodType } from 'trpc-to-openapi';
import { z } from 'zod';
import type { JSONSchema } from 'zod/v4/core';
import type { ErrorCode } from '../errors.ts';
import type { Deprecation, LeadwireMeta } from '../trpc.ts';
import { checkDeprecation } from './deprecation.ts';

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
  /** The credential the procedure's builder checks (its meta, set by publicApiProcedure and internalProcedure). */
  auth: LeadwireMeta['auth'];
  /** Its OpenAPI summary: the one-line description the docs and the SDK's generated router type show. */
  summary: string | undefined;
  /** The input's field names (path and query parameters of a GET), or null when its schema takes any key. */
  readonly inputKeys: ReadonlySet<string> | null;
  /** A write served on a route of its own (LeadwireMeta.oneTrip), with its output's JSON Schema for the serializer. */
  oneTrip: boolean;
  readonly outputSchema: JSONSchema.BaseSchema;
  /** Set when the operation or some of its fields are deprecated: every answer says so (http/deprecation.ts). */
  deprecated: Deprecation | undefined;
}

/** A procedure as the route table reads it: through trpc-to-openapi's own walk, as its generator and adapter do. */
type Procedure = Parameters<typeof getInputOutputParsers>[0];

/**
 * The field names an input schema accepts, read from its JSON Schema (zod's `toJSONSchema`, as clients see it), or
 * null when it takes any (a record, a catch-all, a shape this reading does not know): a route whose keys cannot be
 * listed is never made strict by mistake.
 */
export function inputKeysOf(procedure: Procedure): ReadonlySet<string> | null {
  const { inputParser } = getInputOutputParsers(procedure);
  // The REST adapter passes no input at all to a void-like one (whatever the query holds): it takes no keys.
  if (instanceofZodTypeLikeVoid(unwrapZodType(inputParser, true))) return new Set();
  const keys = new Set<string>();
  const walk = (s: JSONSchema.BaseSchema): boolean => {
    if (s.anyOf) return s.anyOf.every(walk);
    if (s.oneOf) return s.oneOf.every(walk);
    if (s.allOf) return s.allOf.every(walk);
    if (s.type !== 'object') return false;
    // Strip (absent) or strict (false) objects name their keys; a catch-all or a record takes any.
    if (s.additionalProperties !== undefined && s.additionalProperties !== false) return false;
    if (s.patternProperties || s.propertyNames) return false;
    for (const k of Object.keys(s.properties ?? {})) keys.add(k);
    return true;
  };
  const schema = z.toJSONSchema(inputParser, { io: 'input', unrepresentable: 'any' });
  return walk(schema) ? keys : null;
}

/** The query parameters of `query` that `route` does not take, in the order sent. */
export function unknownQueryKeys(route: RestRoute, query: Record<string, unknown>): string[] {
  const allowed = route.inputKeys;
  return allowed ? Object.keys(query).filter((k) => !allowed.has(k)) : [];
}

/** What tRPC's public `Router` interface puts beside the procedures (typed by it, so a rename fails the type check). */
const ROUTER_MEMBERS: ReadonlySet<string> = new Set<keyof AnyTRPCRouter>(['_def', 'createCaller']);

/**
 * The router's procedures by their dotted path. A built router carries its procedures and sub-routers as properties
 * (tRPC's `BuiltRouter`); a procedure is a function, a sub-router or record an object.
 */
function procedureRecord(node: object, prefix = '', into: Record<string, Procedure> = {}): Record<string, Procedure> {
  for (const [key, value] of Object.entries(node)) {
    if (ROUTER_MEMBERS.has(key)) continue;
    if (typeof value === 'function') into[`${prefix}${key}`] = value as Procedure;
    else if (typeof value === 'object' && value !== null) procedureRecord(value, `${prefix}${key}.`, into);
  }
  return into;
}

/** The REST routes a router exposes, read from its OpenAPI meta: one source for routing checks and status codes. */
export function restRoutes(router: AnyTRPCRouter): RestRoute[] {
  const routes: RestRoute[] = [];
  forEachOpenApiProcedure<LeadwireMeta>(procedureRecord(router), ({ path: procedure, type, procedure: p, meta }) => {
    const { method, path } = meta.openapi;
    // Read on first use: rendering every input's JSON Schema at start-up would cost each server start ~20-70 ms.
    let keys: ReadonlySet<string> | null | undefined;
    routes.push({
      method,
      path,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
      procedure,
      successStatus: meta.successStatus ?? 200,
      errorCodes: meta.errorCodes ?? [],
      permission: meta.permission,
      alsoPermitted: meta.alsoPermitted ?? [],
      type: type === 'mutation' ? 'mutation' : 'query',
      auth: meta.auth,
      summary: meta.openapi.summary,
      deprecated: meta.deprecated ? checkDeprecation(procedure, meta.deprecated) : undefined,
      get inputKeys() {
        if (keys === undefined) keys = inputKeysOf(p);
        return keys;
      },
      oneTrip: meta.oneTrip === true,
      get outputSchema() {
        return z.toJSONSchema(getInputOutputParsers(p).outputParser as z.ZodType, { io: 'output', unrepresentable: 'any' });
      },
    });
  });
  return routes;
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
