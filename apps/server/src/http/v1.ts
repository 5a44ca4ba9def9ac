import cors from '@fastify/cors';
import { type Deps, v1Router } from '@leadwire/core';
import { buildV1OpenApiDocument } from '@leadwire/core/openapi.ts';
import type { FastifyInstance } from 'fastify';
import { registerDocs } from './docs.ts';
import { restSurface } from './rest-surface.ts';

export const EXPOSED_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'x-request-id', 'idempotent-replayed'];

/**
 * The public API v1 under /api/v1: CORS for any origin without credentials (the SDK's browser build calls it), the
 * contract and its reference, and the REST surface itself.
 */
export async function v1Plugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  await app.register(cors, {
    origin: '*',
    credentials: false,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'idempotency-key', 'x-source', 'x-request-id'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 86_400,
    // An OPTIONS without Origin is not a preflight but a plain question about the resource: 204, not a text/plain 400.
    strictPreflight: false,
  });
  registerDocs(app, { title: 'Leadwire API v1 reference', build: () => buildV1OpenApiDocument(deps.config.BASE_URL) });
  await restSurface(app, { deps, router: v1Router });
}
