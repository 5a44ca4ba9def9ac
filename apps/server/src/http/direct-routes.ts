import { createCallerFactory, type RequestContext, type RestRoute } from '@leadwire/core';
import { type AnyTRPCRouter, TRPCError } from '@trpc/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface DirectRoutesOptions {
  router: AnyTRPCRouter;
  routes: readonly RestRoute[];
  /** The procedure's context, as the surface makes it for every route. */
  context: (req: FastifyRequest, reply: FastifyReply) => RequestContext;
  /** The surface's answer to a failure (logged, `{ error, code }`). */
  fail: (req: FastifyRequest, reply: FastifyReply, err: unknown) => FastifyReply;
}

/**
 * The writes that do their database work in one round trip (LeadwireMeta.oneTrip), each on a Fastify route of its own
 * that calls its procedure through tRPC's caller: the same procedure, middlewares and zod schemas as every other
 * route, without trpc-to-openapi's generic request handling around it (a Fetch Request built per call for its abort
 * signal, the input schema walked for coercion on every call), which measured about a third of the server's time per
 * upsert beside the round trip (docs/benchmarks.md). The answer is serialized from the output's JSON Schema by
 * Fastify's compiled serializer. Everything else of the surface (404/405, the body checks, `{ error, code }`) is the
 * scope's hooks, shared with trpc-to-openapi's routes.
 *
 * What trpc-to-openapi does for a POST and these routes do too: a body that is not JSON is 415 with its words, the
 * input is the body (these routes take no path parameters), the status is the route's success status, and errors
 * become the public error through the same `toPublicError`.
 */
export function directRoutes(app: FastifyInstance, opts: DirectRoutesOptions): void {
  const caller = createCallerFactory(opts.router);
  for (const route of opts.routes) {
    if (!route.oneTrip || route.method !== 'POST' || route.path.includes('{')) continue;
    const segments = route.procedure.split('.');
    app.route({
      method: 'POST',
      url: route.path,
      schema: { response: { [route.successStatus]: route.outputSchema } },
      handler: async (req, reply) => {
        const contentType = req.headers['content-type'];
        try {
          if (!contentType?.startsWith('application/json')) {
            throw new TRPCError({
              code: 'UNSUPPORTED_MEDIA_TYPE',
              message: contentType ? `Unsupported content-type "${contentType}` : 'Missing content-type header',
            });
          }
          const procedures = caller(opts.context(req, reply)) as unknown as Record<string, unknown>;
          const call = segments.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], procedures) as (
            input: unknown,
          ) => Promise<unknown>;
          // A shallow copy, as the REST adapter hands procedures `{ ...body }`.
          const data = await call({ ...(req.body as object) });
          return reply.status(route.successStatus).type('application/json').send(data);
        } catch (err) {
          return opts.fail(req, reply, err);
        }
      },
    });
  }
}
