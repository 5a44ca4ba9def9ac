import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * An incoming `X-Request-Id` is kept when it is 1-128 characters of letters, digits and `_ . : -`: what proxies and
 * tracing tools send (UUIDs, ULIDs, `trace:span` pairs). Anything else (too long, spaces, control characters, non-ASCII,
 * a repeated header) is replaced by a new UUID, so no arbitrary bytes from a client reach the logs or a response header.
 */
export const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Fastify's `genReqId`: the client's id when sane, else a new one. */
export function requestIdOf(req: Pick<IncomingMessage, 'headers'>): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
