import { type Deps, errors } from '@leadwire/core';
import {
  CUSTOM_EVENT_MAX_BYTES,
  customEventErrors,
  followLink,
  PAGE_VIEW_MAX_BYTES,
  parseCustomEvent,
  parsePageView,
  recordCustomEvent,
  recordPageView,
  trackingErrors,
} from '@leadwire/core/surfaces';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { pageViews } from '@leadwire/core/runtime';
import { type BeaconEndpoint, beaconBody, beaconScope } from './beacon.ts';
import { serveSnippet } from './embed.ts';

/** The browser (or a proxy in front of it) says the person opted out of tracking. */
const optedOut = (req: FastifyRequest) => req.headers['sec-gpc'] === '1' || req.headers.dnt === '1';

const PAGE_VIEW: BeaconEndpoint = {
  path: '/track/pageview',
  maxBytes: PAGE_VIEW_MAX_BYTES,
  noun: 'the page view',
  mediaType: trackingErrors.mediaType,
  tooLarge: trackingErrors.tooLarge,
  refused: (code) => pageViews.inc({ outcome: 'refused', reason: code }),
  failure: 'page view failed',
  headers: { 'access-control-allow-origin': '*' },
};

const CUSTOM_EVENT: BeaconEndpoint = {
  path: '/track/event',
  maxBytes: CUSTOM_EVENT_MAX_BYTES,
  noun: 'the custom event',
  mediaType: customEventErrors.mediaType,
  tooLarge: customEventErrors.tooLarge,
  refused: () => undefined,
  failure: 'custom event failed',
  headers: { 'access-control-allow-origin': '*' },
};

/**
 * The tracking snippet's addresses under /api, for any website: the script (`GET /api/embed/tracking.js`), its
 * collect endpoint (`POST /api/track/pageview`), the custom events of `leadwire.track()` (`POST /api/track/event`), and the redirect of tracked links in texts (`GET /api/t/l/<token>`). No key; CORS for any origin without credentials. The body is read as
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
    beaconScope(collect, PAGE_VIEW);
    collect.post(PAGE_VIEW.path, { bodyLimit: PAGE_VIEW.maxBytes }, async (req, reply) => {
      const input = parsePageView(beaconBody(req, PAGE_VIEW));
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

  await app.register(async (collect) => {
    beaconScope(collect, CUSTOM_EVENT);
    collect.post(CUSTOM_EVENT.path, { bodyLimit: CUSTOM_EVENT.maxBytes }, async (req, reply) => {
      const input = parseCustomEvent(beaconBody(req, CUSTOM_EVENT));
      await recordCustomEvent(deps.db, input, {
        clock: deps.clock,
        perMinute: deps.config.TRACKING_PAGE_VIEWS_PER_MINUTE,
        anonymous: optedOut(req),
        setHeader: (name, value) => void reply.header(name, value),
      });
      return reply.status(202).send();
    });
  });
}
