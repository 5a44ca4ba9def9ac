import { initTRPC } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { RequestContext } from './context.ts';
import { type ErrorCode, toPublicError, writeFailure } from './errors.ts';
import { PACED_STATUSES, pacingKey, refusalPacerOf } from './limits/refusal-pacer.ts';

// A type alias, not an interface: trpc-to-openapi needs meta with an implicit index signature.
export type LeadwireMeta = {
  /** HTTP status of a successful REST call when it is not 200 (e.g. 201 for a created note). */
  successStatus?: number;
  /** The permission a Public API key needs; set by `publicApiProcedure`, documented in the contract. */
  permission?: string;
  /** Permissions that also let a key call the operation (each may read less than `permission`); see publicApiProcedure. */
  alsoPermitted?: readonly string[];
  /**
   * The credential the procedure checks: set by the builder that checks it (`internalProcedure`, `publicApiProcedure`),
   * never by a router, so that the contract reads the wiring from meta rather than from tRPC's middleware list.
   */
  auth?: 'internal' | 'public';
  /** Stable error codes this operation can answer with, documented in the OpenAPI contract. */
  errorCodes?: readonly ErrorCode[];
  /**
   * The write does its database work in one round trip (publicApiProcedure's `oneTrip`): the HTTP layer serves it on
   * a route of its own that calls the procedure directly (apps/server/src/http/direct-routes.ts).
   */
  oneTrip?: boolean;
  /** Deprecated (the operation, or some of its fields): read by the REST surfaces and the documents (http/deprecation.ts). */
  deprecated?: Deprecation;
};

export interface Deprecation {
  /** The day it was announced, `YYYY-MM-DD` (UTC): the `Deprecation` header's date (RFC 9745). */
  since: string;
  /** The day after which it may stop working, `YYYY-MM-DD` (UTC): the `Sunset` header (RFC 8594). */
  sunset: string;
  /** Where the notice is: the CHANGELOG entry or a page saying what to use instead (absolute URL). */
  notice: string;
  /** Only these fields of the operation (its input or output) are deprecated, not the operation itself. */
  fields?: readonly string[];
}

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  412: 'PRECONDITION_FAILED',
  408: 'TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

const t = initTRPC
  .context<RequestContext>()
  .meta<OpenApiMeta<LeadwireMeta>>()
  .create({
    // Stack traces and framework internals never reach a client.
    isDev: false,
    errorFormatter({ shape, error, ctx }) {
      const pub = toPublicError(error);
      // Undefined only when the context itself could not be made; the response header still carries the id then.
      const body = ctx ? { ...pub.body, requestId: ctx.requestId } : pub.body;
      // Typed clients switch on data.code and the JSON-RPC shape.code: both follow our status, not tRPC's view of an
      // error it did not raise (which is -32603 INTERNAL_SERVER_ERROR for anything thrown as a plain error).
      const code = TRPC_CODE_BY_STATUS[pub.status] ?? shape.data.code;
      return {
        ...shape,
        code: TRPC_ERROR_CODES_BY_KEY[code],
        message: pub.body.error,
        data: { ...shape.data, code, httpStatus: pub.status, body },
      };
    },
  });

export const router = t.router;
/** Calls procedures without a transport: the HTTP layer's direct routes (the same procedures, middlewares and schemas). */
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;
/**
 * A mutation that failed on the database (timed out, lost its connection) was rolled back by the transaction it ran in
 * (or, as one statement, never committed): it is answered save_failed. A query keeps its error, which toPublicError
 * answers 503; no connection at all is 503 either way.
 */
const databaseFailures = t.middleware(async ({ next, type, path }) => {
  const result = await next();
  if (result.ok || type !== 'mutation') return result;
  const failure = writeFailure(result.error, path.split('.')[0]);
  if (failure) throw failure;
  return result;
});

/**
 * A refusal (401, 429, 503) is held before it goes out once its address (for a 503, the whole process) had its free ones
 * this second (limits/refusal-pacer.ts): where it was decided does not matter (a key's first look-up, the sign-in
 * throttle, the sign-up budget, a full hashing queue), since a closed-loop flood re-sends the moment it is answered and
 * takes whatever CPU its answers leave. Outermost, so that it sees the refusals of every middleware after it (the key
 * and session checks).
 */
const pacedRefusals = t.middleware(async ({ ctx, next }) => {
  const result = await next();
  if (result.ok || ctx.ip === undefined) return result;
  const { status } = toPublicError(result.error);
  if (PACED_STATUSES.has(status)) await refusalPacerOf(ctx.deps).hold(pacingKey(status, ctx.ip));
  return result;
});

export const baseProcedure = t.procedure.use(pacedRefusals).use(databaseFailures);
