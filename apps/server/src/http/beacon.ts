import { AppError, toPublicError } from '@leadwire/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { logFailure } from './log-failure.ts';
import { sendError } from './rest-surface.ts';

/**
 * An anonymous POST any website's script sends (a lead capture, a page view): no key, CORS for any origin without
 * credentials, the body read as bytes whatever its type, so text/plain (sendBeacon, and fetch without a preflight) and
 * JSON are one path. What differs between the two endpoints is named here; the rest is `beaconScope`.
 */
export interface BeaconEndpoint {
  path: string;
  maxBytes: number;
  /** What the sender is told to send uncompressed: "the submission", "the page view". */
  noun: string;
  mediaType: () => AppError;
  tooLarge: () => AppError;
  /** Counts a refusal by its catalogue code (a short fixed list, so a bounded metric label). */
  refused: (code: string) => void;
  /** The log line of a refusal. */
  failure: string;
  /** Headers on every answer of the scope. */
  headers: Record<string, string>;
}

const MEDIA_TYPES = new Set(['text/plain', 'application/json']);

/** The body parser, error handler, headers and CORS preflight of a beacon endpoint, in the `scope` it is posted in. */
export function beaconScope(scope: FastifyInstance, ep: BeaconEndpoint): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ep.maxBytes }, (_req, body, done) => done(null, body));
  scope.setErrorHandler((err, req, reply) => {
    const code = (err as { code?: unknown }).code;
    const pub = toPublicError(code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? ep.tooLarge() : err);
    ep.refused(pub.body.code);
    logFailure(req.log, err, pub, ep.failure);
    return sendError(reply, pub);
  });
  scope.addHook('onRequest', async (_req, reply) => {
    void reply.headers(ep.headers);
  });
  scope.options(ep.path, async (_req, reply) =>
    reply
      .status(204)
      .headers({
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'content-type',
        'access-control-max-age': '86400',
      })
      .send(),
  );
}

/** The body's bytes, once its headers say uncompressed UTF-8 text or JSON (refused with the endpoint's errors if not). */
export function beaconBody(req: FastifyRequest, ep: BeaconEndpoint): Buffer {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw new AppError('unsupported_content_encoding', `Content-Encoding is not supported; send ${ep.noun} uncompressed`);
  }
  const [mediaType, ...params] = (req.headers['content-type'] ?? '').split(';').map((s) => s.trim().toLowerCase());
  if (!MEDIA_TYPES.has(mediaType ?? '')) throw ep.mediaType();
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') throw ep.mediaType();
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}
