import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyTRPCOpenApiPlugin } from 'trpc-to-openapi';

/*
 * The one place that works around trpc-to-openapi's Fastify adapter (3.3). Each patch below is there because the
 * adapter lacks something and neither it nor Fastify has an option for it; trpc-to-openapi-fastify.test.ts shows, on
 * the bare adapter, the failure each one prevents, so the upgrade that fixes it (or changes what it patches) fails that
 * test and the patch can go.
 */

/** Requests that arrived with no body and no content type; their empty body parses as `{}`. */
const bodiless = new WeakSet<FastifyRequest>();

/** Whether `req` is a bodiless POST given a JSON content type here, so that the JSON parser reads its nothing as `{}`. */
export function isBodiless(req: FastifyRequest): boolean {
  return bodiless.has(req);
}

/** Installs the patches in `app`'s scope; call it before registering `trpcOpenApiPlugin` there. */
export function patchTrpcOpenApiFastify(app: FastifyInstance): void {
  // The adapter hands the Fastify reply to tRPC as the response, and tRPC aborts the request's signal when the response
  // closes unless `res.writableEnded`, which the adapter does not copy onto the reply: every request ended in an abort
  // (an AbortError with its stack, about 4% of the server's time per upsert). The raw response's flag keeps aborts for
  // disconnects.
  app.decorateReply('writableEnded', {
    getter(this: FastifyReply) {
      return this.raw.writableEnded;
    },
  });

  app.addHook('onRequest', async (req) => {
    const contentType = req.headers['content-type'];
    // Media types are case-insensitive; the adapter compares `application/json` as written and answers 415 otherwise.
    if (contentType) req.headers['content-type'] = contentType.toLowerCase();
    // A POST with no body at all (e.g. POST /api/api-keys/{id}/revoke) is an empty JSON object; the adapter answers
    // 415 "Missing content-type header" to any POST without one.
    else if (req.method === 'POST' && !req.headers['transfer-encoding'] && (req.headers['content-length'] ?? '0') === '0') {
      req.headers['content-type'] = 'application/json';
      bodiless.add(req);
    }
  });
}

/**
 * The adapter's plugin without the check it runs as it creates its handler: unless NODE_ENV is `production`, it
 * generates the router's whole OpenAPI document to validate the router, and throws the document away. That was 22 % of
 * an app's start (about 70 ms of a server's, each test app's too). Leadwire generates the same documents from the same
 * routers (`@leadwire/core`'s openapi/documents.ts), and the contract tests build both, so a router the generator
 * refuses fails `npm test` all the same. The plugin creates its handler synchronously, so NODE_ENV reads `production`
 * for that call alone.
 */
export const trpcOpenApiPlugin: typeof fastifyTRPCOpenApiPlugin = (fastify, opts, done) => {
  const env = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    fastifyTRPCOpenApiPlugin(fastify, opts, done);
  } finally {
    if (env === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = env;
  }
};
