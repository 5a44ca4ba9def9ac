import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';

/**
 * The reference must work with no Internet access: the plugin serves Scalar's own bundle from the package at
 * `docs/js/scalar.js` (its default when no `cdn` is given), and everything that would reach a Scalar service is off.
 */
const OFFLINE = {
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
} as const;

/** The bundle is about 4 MB and changes only when the package is upgraded. */
const BUNDLE_CACHE = 'public, max-age=86400';

/** GET /docs/json (the OpenAPI 3.1 contract, built once) and GET /docs (its interactive reference). */
export function registerDocs(app: FastifyInstance, opts: { title: string; build: () => unknown }) {
  let doc: unknown;
  app.get('/docs/json', async () => (doc ??= opts.build()));

  // Registered without await: v1Plugin calls this synchronously, and Fastify loads queued plugins before listening.
  void app.register(scalar, {
    routePrefix: '/docs',
    configuration: {
      ...OFFLINE,
      // Relative to the page (/…/v1/docs/), so it holds behind any path prefix.
      url: './json',
      pageTitle: opts.title,
      metaData: { title: opts.title },
    },
    hooks: {
      onRequest: (req, reply, done) => {
        if (req.url.endsWith('.js')) void reply.header('cache-control', BUNDLE_CACHE);
        done();
      },
    },
  });
}
