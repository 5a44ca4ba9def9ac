import type { PublicError } from '@leadwire/core';
import type { FastifyBaseLogger } from 'fastify';

/**
 * How a failed request is logged, the same on every surface: a client error (4xx) not at all (the request line says
 * it), a server error with its stack. A 503 is the server refusing on purpose (hashing slots full, no database
 * connection within the bound, shutting down): one warn line with the reason and no stack, so that a flood of them
 * shows without burying the log.
 */
export function logFailure(log: FastifyBaseLogger, err: unknown, pub: PublicError, msg: string): void {
  if (pub.status < 500) return;
  if (pub.status === 503) log.warn({ code: pub.body.code, reason: err instanceof Error ? err.message : String(err) }, msg);
  else log.error({ err }, msg);
}
