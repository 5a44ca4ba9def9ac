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

/** A workflow's intake URL carries its only credential in the path: logged as `/api/workflows/hooks/[redacted]`. */
const CREDENTIAL_IN_PATH = /(\/workflows\/hooks\/)[^/?]+/;

/** The path of a request URL as logs show it: no query string, no credential. */
export function loggablePath(url: string): string {
  return (url.split('?')[0] ?? '').replace(CREDENTIAL_IN_PATH, '$1[redacted]');
}

export function loggerOptions(level: string): NonNullable<FastifyServerOptions['logger']> {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, path: loggablePath(req.url), id: req.id }),
    },
  };
}
