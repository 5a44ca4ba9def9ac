import type { Deps } from '@leadwire/core';
import type { FastifyInstance } from 'fastify';
import { buildV1OpenApiDocument } from '@leadwire/core/openapi.ts';

/** GET /docs/json (the OpenAPI 3.1 contract) and GET /docs (its interactive reference). */
export function registerDocs(app: FastifyInstance, deps: Deps) {
  let doc: unknown;
  app.get('/docs/json', async () => (doc ??= buildV1OpenApiDocument(deps.config.BASE_URL)));
}
