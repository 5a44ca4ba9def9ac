import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { RequestContext } from './context.ts';
import { toPublicError } from './errors.ts';

// A type alias, not an interface: trpc-to-openapi needs meta with an implicit index signature.
export type LeadwireMeta = {
  /** HTTP status of a successful REST call when it is not 200 (e.g. 201 for a created note). */
  successStatus?: number;
  /** The permission a Public API key needs; set by `publicApiProcedure`, documented in the contract. */
  permission?: string;
  /** Stable error codes this operation can answer with, documented in the OpenAPI contract. */
  errorCodes?: readonly string[];
};

const t = initTRPC
  .context<RequestContext>()
  .meta<OpenApiMeta<LeadwireMeta>>()
  .create({
    // Stack traces and framework internals never reach a client.
    isDev: false,
    errorFormatter({ shape, error }) {
      const pub = toPublicError(error);
      return { ...shape, message: pub.body.error, data: { ...shape.data, httpStatus: pub.status, body: pub.body } };
    },
  });

export const router = t.router;
export const middleware = t.middleware;
export const baseProcedure = t.procedure;
export const createCallerFactory = t.createCallerFactory;
