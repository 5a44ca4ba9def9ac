import cors from '@fastify/cors';
import { type Deps, internalRouter, toPublicError } from '@leadwire/core';
import { buildInternalOpenApiDocument } from '@leadwire/core/openapi.ts';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { FastifyInstance } from 'fastify';
import { registerDocs } from './docs.ts';
import { createRequestContext, restSurface } from './rest-surface.ts';
import { EXPOSED_HEADERS } from './v1.ts';

/** Browsers may call the application surface only from the hosted application's own origin. */
async function appCors(app: FastifyInstance, deps: Deps) {
  await app.register(cors, {
    origin: [deps.config.APP_URL],
    credentials: false,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'x-request-id', 'trpc-accept'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 86_400,
    // An OPTIONS without Origin is not a preflight but a plain question about the resource: 204, not a text/plain 400.
    strictPreflight: false,
  });
}

/** Typed tRPC for internal frontends at /api/trpc. */
export async function internalTrpcPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  await appCors(app, deps);
  await app.register(fastifyTRPCPlugin, {
    trpcOptions: {
      router: internalRouter,
      createContext: ({ req, res }) => createRequestContext(deps, req, res),
      onError: ({ error, req }) => {
        if (toPublicError(error).status >= 500) req.log.error({ err: error }, 'procedure failed');
      },
      responseMeta: ({ errors }) => {
        if (!errors[0]) return {};
        const { status, headers } = toPublicError(errors[0]);
        return { status, ...(headers ? { headers: { ...headers } } : {}) };
      },
    },
  } satisfies FastifyTRPCPluginOptions<typeof internalRouter>);
}

/** The same procedures as REST under /api, with their contract at /api/docs/json and a reference at /api/docs. */
export async function internalRestPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  await appCors(app, deps);
  registerDocs(app, { title: 'Leadwire application API reference', build: () => buildInternalOpenApiDocument(deps.config.BASE_URL) });
  await restSurface(app, { deps, router: internalRouter });
}
