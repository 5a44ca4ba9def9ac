import type { Deps } from '@leadwire/core';
import { CAPTURE_MAX_BYTES, captureErrors, captureLead, parseCaptureBody } from '@leadwire/core/surfaces';
import type { FastifyInstance } from 'fastify';
import { captureSubmissions } from '@leadwire/core/runtime';
import { type BeaconEndpoint, beaconBody, beaconScope } from './beacon.ts';
import { serveSnippet } from './embed.ts';

const EXPOSED = ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id'].join(', ');

const CAPTURE: BeaconEndpoint = {
  path: '/api/capture/:orgId',
  maxBytes: CAPTURE_MAX_BYTES,
  noun: 'the submission',
  mediaType: captureErrors.mediaType,
  tooLarge: captureErrors.tooLarge,
  refused: (code) => captureSubmissions.inc({ outcome: 'refused', reason: code }),
  failure: 'lead capture failed',
  headers: { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED },
};

/**
 * The lead-capture script and its endpoint, for any website. The script is served at `/api/embed/lead-capture.js` and,
 * for installs made before the API moved under /api, at `/embed/lead-capture.js` (the same bytes: spec, Versioning 3).
 * Submissions go to `POST /api/capture/<org_id>`: no key, CORS for any origin without credentials, the body read as
 * bytes whatever its type, so text/plain (sendBeacon, and the script's fetch, neither preflighted) and JSON are one path.
 */
export async function capturePlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  serveSnippet(app, '/api/embed/lead-capture.js', 'lead-capture', 'lead-capture.js', deps.log);
  serveSnippet(app, '/embed/lead-capture.js', 'lead-capture', 'lead-capture.js', deps.log);

  await app.register(async (capture) => {
    beaconScope(capture, CAPTURE);
    capture.post<{ Params: { orgId: string } }>(CAPTURE.path, { bodyLimit: CAPTURE.maxBytes }, async (req, reply) => {
      const body = parseCaptureBody(beaconBody(req, CAPTURE));
      const thankYou = await captureLead(deps, req.params.orgId, body, {
        ip: req.ip,
        setHeader: (name, value) => void reply.header(name, value),
      });
      // Nothing about the contact: an anonymous caller learns nothing about what the workspace already knew.
      captureSubmissions.inc({ outcome: 'accepted' });
      return reply.status(200).send({ ok: true, ...thankYou });
    });
  });
}
