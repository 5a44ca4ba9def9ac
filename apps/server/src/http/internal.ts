import cors from '@fastify/cors';
import { type Deps, internalRouter, toPublicError } from '@leadwire/core';
import { buildInternalOpenApiDocument } from '@leadwire/core/openapi';
import { fastifyRequestHandler, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { FastifyInstance } from 'fastify';
import { registerDocs } from './docs.ts';
import { browserSessionContext } from './browser-session.ts';
import { addJsonBodyParser } from './json-body.ts';
import { createRequestContext, restSurface, sendError } from './rest-surface.ts';
import { EXPOSED_HEADERS } from './v1.ts';
import { logFailure } from './log-failure.ts';

/** Browsers may call the application surface only from the hosted application's own origin. */
async function appCors(app: FastifyInstance, deps: Deps) {
  await app.register(cors, {
    origin: [deps.config.APP_URL],
    credentials: false,
    methods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['authorization', 'x-api-key', 'content-type', 'x-request-id', 'trpc-accept'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 86_400,
    // An OPTIONS without Origin is not a preflight but a plain question about the resource: 204, not a text/plain 400.
    strictPreflight: false,
  });
}

/**
 * Typed tRPC for internal frontends at /api/trpc. The route is tRPC's own request handler behind the JSON body parser
 * every surface shares (tRPC's plugin would install a parser of its own); tRPC takes the parsed body as it is.
 */
export async function internalTrpcPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  await appCors(app, deps);
  // tRPC reads an empty string as "no input", which is what a mutation without input sends.
  addJsonBodyParser(app, { empty: () => ({ value: '' }) });
  app.setErrorHandler((err, req, reply) => {
    const pub = toPublicError(err);
    logFailure(req.log, err, pub, 'request failed');
    return sendError(reply, pub);
  });
  const trpcOptions = {
    router: internalRouter,
    createContext: ({ req, res }) => ({ ...createRequestContext(deps, req, res), ...browserSessionContext(deps.config, req, res) }),
    onError: ({ error, req }) => {
      logFailure(req.log, error, toPublicError(error), 'procedure failed');
    },
    responseMeta: ({ errors }) => {
      if (!errors[0]) return {};
      const { status, headers } = toPublicError(errors[0]);
      return { status, ...(headers ? { headers: { ...headers } } : {}) };
    },
  } satisfies FastifyTRPCPluginOptions<typeof internalRouter>['trpcOptions'];
  app.all<{ Params: { path: string } }>('/:path', async (req, res) => {
    await fastifyRequestHandler({ ...trpcOptions, req, res, path: req.params.path });
  });
}

/** The same procedures as REST under /api, with their contract at /api/docs/json and a reference at /api/docs. */
export async function internalRestPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  await appCors(app, deps);
  registerDocs(app, { title: 'Leadwire application API reference', build: () => buildInternalOpenApiDocument(deps.config.BASE_URL) });
  await restSurface(app, { deps, router: internalRouter, strictQuery: true });
}
