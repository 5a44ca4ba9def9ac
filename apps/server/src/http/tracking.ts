import { AppError, type Deps, errors, toPublicError } from '@leadwire/core';
import { followLink, PAGE_VIEW_MAX_BYTES, parsePageView, recordPageView, trackingErrors } from '@leadwire/core/surfaces';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serveSnippet } from './embed.ts';
import { pageViews } from '@leadwire/core/runtime';
import { sendError } from './rest-surface.ts';
import { logFailure } from './log-failure.ts';

const MEDIA_TYPES = new Set(['text/plain', 'application/json']);

/** The browser (or a proxy in front of it) says the person opted out of tracking. */
const optedOut = (req: FastifyRequest) => req.headers['sec-gpc'] === '1' || req.headers.dnt === '1';

function checkBodyHeaders(req: FastifyRequest) {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw new AppError('unsupported_content_encoding', 'Content-Encoding is not supported; send the page view uncompressed');
  }
  const [mediaType, ...params] = (req.headers['content-type'] ?? '').split(';').map((s) => s.trim().toLowerCase());
  if (!MEDIA_TYPES.has(mediaType ?? '')) throw trackingErrors.mediaType();
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') throw trackingErrors.mediaType();
}

/**
 * The tracking snippet's addresses under /api, for any website: the script (`GET /api/embed/tracking.js`), its
 * collect endpoint (`POST /api/track/pageview`), and the redirect of tracked links in texts (`GET /api/t/l/<token>`). No key; CORS for any origin without credentials. The body is read as
 * bytes whatever its type, so sendBeacon's text/plain (sent without a preflight) and application/json are one path.
 */
export async function trackingPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  serveSnippet(app, '/embed/tracking.js', 'tracking', 'tracking.js', deps.log);

  // A tracked link from a text: to the organization's own site, naming the contact (?c=) for the snippet there.
  app.get<{ Params: { token: string } }>('/t/l/:token', async (req, reply) => {
    const destination = await followLink(deps.db, deps.clock, req.params.token, { count: req.method === 'GET' });
    if (!destination) throw errors.notFound('No such link');
    // no-referrer: the site is not told the link's token.
    return reply.status(302).headers({ location: destination, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).send();
  });

  await app.register(async (collect) => {
    collect.removeAllContentTypeParsers();
    collect.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PAGE_VIEW_MAX_BYTES }, (_req, body, done) => done(null, body));
    collect.setErrorHandler((err, req, reply) => {
      const code = (err as { code?: unknown }).code;
      const pub = toPublicError(code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? trackingErrors.tooLarge() : err);
      // The code is from the error catalogue: a short fixed list, so a bounded label.
      pageViews.inc({ outcome: 'refused', reason: pub.body.code });
      logFailure(req.log, err, pub, 'page view failed');
      return sendError(reply, pub);
    });
    collect.addHook('onRequest', async (_req, reply) => {
      void reply.header('access-control-allow-origin', '*');
    });
    collect.options('/track/pageview', async (_req, reply) =>
      reply
        .status(204)
        .headers({
          'access-control-allow-methods': 'POST, OPTIONS',
          'access-control-allow-headers': 'content-type',
          'access-control-max-age': '86400',
        })
        .send(),
    );
    collect.post('/track/pageview', { bodyLimit: PAGE_VIEW_MAX_BYTES }, async (req, reply) => {
      checkBodyHeaders(req);
      const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const input = parsePageView(bytes);
      await recordPageView(deps.db, input, {
        clock: deps.clock,
        perMinute: deps.config.TRACKING_PAGE_VIEWS_PER_MINUTE,
        anonymous: optedOut(req),
        setHeader: (name, value) => void reply.header(name, value),
      });
      pageViews.inc({ outcome: 'accepted' });
      return reply.status(202).send();
    });
  });
}
