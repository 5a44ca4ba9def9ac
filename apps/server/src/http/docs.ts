import { createHash } from 'node:crypto';
import helmet from '@fastify/helmet';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

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

/**
 * What the reference page may do: run its own bundle and its one inline start-up script (allowed by hash, see
 * `allowInlineScripts`), style itself (Scalar inserts style elements at run time), and fetch the contract from us.
 * Nothing from elsewhere, no frames, no forms, never framed itself.
 */
const CSP_DIRECTIVES = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:', 'blob:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  workerSrc: ["'self'", 'blob:'],
  manifestSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
  objectSrc: ["'none'"],
};

const INLINE_SCRIPT = /<script\b(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script>/gi;

/** Adds the hash of each inline script of an HTML page to the page's script-src: its exact text, nothing else. */
function allowInlineScripts(html: string, csp: string): string {
  const hashes = [...html.matchAll(INLINE_SCRIPT)].map(
    (m) =>
      `'sha256-${createHash('sha256')
        .update(m[1] ?? '')
        .digest('base64')}'`,
  );
  return hashes.length ? csp.replace(/script-src 'self'/, `script-src 'self' ${hashes.join(' ')}`) : csp;
}

/** GET /docs/json (the OpenAPI 3.1 contract, built once) and GET /docs (its interactive reference). */
export function registerDocs(app: FastifyInstance, opts: { title: string; build: () => unknown }) {
  let doc: unknown;
  app.get('/docs/json', async () => (doc ??= opts.build()));

  // Registered without await: v1Plugin calls this synchronously, and Fastify loads queued plugins before listening.
  // The page and its bundle get the security headers, in a scope of their own so that the API's answers do not.
  void app.register(async (page) => {
    await page.register(helmet, {
      contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
      xFrameOptions: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
      // Transport security is the deployment's decision (its TLS proxy), not this page's.
      strictTransportSecurity: false,
    });
    page.addHook('onSend', async (_req, reply, payload) => {
      if (typeof payload === 'string' && String(reply.getHeader('content-type')).startsWith('text/html')) {
        void reply.header('content-security-policy', allowInlineScripts(payload, String(reply.getHeader('content-security-policy') ?? '')));
      }
      return payload;
    });
    serveReference(page, opts.title);
  });
}

/** Headers of the reference app's answer that are the outer reply's own business. */
const HOP_HEADERS = new Set(['content-length', 'connection', 'date', 'keep-alive', 'transfer-encoding']);

/**
 * Scalar's plugin module is 4.4 MB (the browser bundle inlined as a string) and imports an OpenAPI parser with ajv and
 * yaml that it uses only for a spec given as content (ours is given by URL): loaded at start, it was 210 of a server's
 * 1,676 modules and 0.08 s of its 0.79 s of CPU loading them (measured), for a page few requests ask for. So the plugin is loaded on the first
 * request for the page or its bundle, into a Fastify instance of its own, and its answers are passed on through
 * `inject`: the plugin's own page and bundle, under this scope's headers. Only its redirect is ours, since it must
 * name the path the page is mounted at.
 */
function serveReference(page: FastifyInstance, title: string): void {
  let reference: Promise<FastifyInstance> | undefined;
  const load = () =>
    (reference ??= (async () => {
      const { default: scalar } = await import('@scalar/fastify-api-reference');
      const app = Fastify({ logger: false });
      await app.register(scalar, scalarOptions(title));
      await app.ready();
      return app;
    })().catch((err: unknown) => {
      // A failed load is tried again by the next request rather than remembered.
      reference = undefined;
      throw err;
    }));
  page.addHook('onClose', async () => {
    await (await reference?.catch(() => undefined))?.close();
  });
  page.get('/docs', async (req, reply) => reply.redirect(`${new URL(req.url, 'http://local').pathname}/`, 301));
  for (const path of ['/docs/', '/docs/js/scalar.js']) {
    page.get(path, async (_req, reply) => {
      const answer = await (await load()).inject({ method: 'GET', url: path });
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_HEADERS.has(name)) void reply.header(name, value);
      }
      return reply.code(answer.statusCode).send(answer.body);
    });
  }
}

function scalarOptions(title: string) {
  return {
    routePrefix: '/docs',
    configuration: {
      ...OFFLINE,
      // Relative to the page (/…/v1/docs/), so it holds behind any path prefix.
      url: './json',
      pageTitle: title,
      metaData: { title },
    },
    hooks: {
      onRequest: (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
        if (req.url.endsWith('.js')) void reply.header('cache-control', BUNDLE_CACHE);
        done();
      },
    },
  } as const;
}
