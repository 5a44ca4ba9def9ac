import type { FastifyServerOptions } from 'fastify';

/**
 * Structured JSON logs. Headers are never logged by our serializers, and the paths below are redacted in case an
 * object carrying them is ever logged: API keys, passwords and signing secrets stay out of the logs.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.password',
  '*.passwordHash',
  '*.apiKey',
  '*.key',
  '*.secret',
  '*.signingSecret',
  'publicKey',
  'internalKey',
];

export function loggerOptions(level: string): NonNullable<FastifyServerOptions['logger']> {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, path: req.url.split('?')[0], id: req.id }),
    },
  };
}
