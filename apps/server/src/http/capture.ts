import { AppError, type Deps, toPublicError } from '@leadwire/core';
import { CAPTURE_MAX_BYTES, captureErrors, captureLead, parseCaptureBody } from '@leadwire/core/surfaces';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serveSnippet } from './embed.ts';
import { captureSubmissions } from '@leadwire/core/runtime';
import { sendError } from './rest-surface.ts';
import { logFailure } from './log-failure.ts';

const MEDIA_TYPES = new Set(['text/plain', 'application/json']);
const EXPOSED = ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id'].join(', ');

function checkBodyHeaders(req: FastifyRequest) {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw new AppError('unsupported_content_encoding', 'Content-Encoding is not supported; send the submission uncompressed');
  }
  const [mediaType, ...params] = (req.headers['content-type'] ?? '').split(';').map((s) => s.trim().toLowerCase());
  if (!MEDIA_TYPES.has(mediaType ?? '')) throw captureErrors.mediaType();
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') throw captureErrors.mediaType();
}

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
    capture.removeAllContentTypeParsers();
    capture.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CAPTURE_MAX_BYTES }, (_req, body, done) => done(null, body));
    capture.setErrorHandler((err, req, reply) => {
      const code = (err as { code?: unknown }).code;
      const pub = toPublicError(code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? captureErrors.tooLarge() : err);
      // The code is from the error catalogue: a short fixed list, so a bounded label.
      captureSubmissions.inc({ outcome: 'refused', reason: pub.body.code });
      logFailure(req.log, err, pub, 'lead capture failed');
      return sendError(reply, pub);
    });
    capture.addHook('onRequest', async (_req, reply) => {
      void reply.headers({ 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED });
    });
    capture.options('/api/capture/:orgId', async (_req, reply) =>
      reply
        .status(204)
        .headers({
          'access-control-allow-methods': 'POST, OPTIONS',
          'access-control-allow-headers': 'content-type',
          'access-control-max-age': '86400',
        })
        .send(),
    );
    capture.post<{ Params: { orgId: string } }>('/api/capture/:orgId', { bodyLimit: CAPTURE_MAX_BYTES }, async (req, reply) => {
      checkBodyHeaders(req);
      const body = parseCaptureBody(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
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
