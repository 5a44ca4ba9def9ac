import cors from '@fastify/cors';
import { type Deps, knownRefusal, toPublicError, v1Router } from '@leadwire/core';
import { keyGuardOf, refusalPacerOf } from '@leadwire/core/runtime';
import { buildV1OpenApiDocument } from '@leadwire/core/openapi';
import type { FastifyInstance } from 'fastify';
import { registerDocs } from './docs.ts';
import { restSurface, sendError } from './rest-surface.ts';

export const EXPOSED_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'x-request-id',
  'idempotent-replayed',
  // A deprecated operation's answers (docs/versioning.md): a browser client must be able to read them too.
  'deprecation',
  'sunset',
  'link',
];

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
  // After the surface's own 404/405 hook. A key refused for the rest of its window, or one the database did not find,
  // is answered here, before the body is read or the request converted for tRPC: a refusal costs next to nothing.
  // Past a few a second per address they are held before they are answered, like every refusal (RefusalPacer).
  const guard = keyGuardOf(deps);
  const pacer = refusalPacerOf(deps);
  app.addHook('onRequest', async (req, reply) => {
    if (req.method === 'OPTIONS' || req.url.startsWith(`${app.prefix}/docs`)) return;
    const refusal = knownRefusal(guard, req.headers.authorization, 'public', deps.clock.now());
    if (!refusal) return;
    await pacer.hold(req.ip);
    return sendError(
      reply,
      toPublicError(refusal.error),
      Object.fromEntries(Object.entries(refusal.headers).map(([k, v]) => [k, String(v)])),
    );
  });
}
