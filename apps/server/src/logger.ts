import type { FastifyServerOptions } from 'fastify';
import pino, { type DestinationStream } from 'pino';

/**
 * Structured JSON logs. Headers are never logged by our serializers, and the paths below are redacted in case an
 * object carrying them is ever logged: API keys, passwords and signing secrets stay out of the logs.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  // The console's session cookie and its CSRF value (http/browser-session.ts).
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'headers.cookie',
  'headers["x-csrf-token"]',
  'headers["set-cookie"]',
  '*.password',
  '*.passwordHash',
  '*.apiKey',
  '*.key',
  '*.secret',
  '*.signingSecret',
  'publicKey',
  'internalKey',
];

/**
 * Routes whose path carries a credential, logged with it as `[redacted]`: a workflow's intake URL (its only
 * credential: whoever holds it creates contacts and sends texts) and a tracked link in a text (`/api/t/l/<token>`:
 * following it names the contact to the site and counts as their click). Every other token travels in a query string
 * (password reset, invitation), which logs never show.
 */
const CREDENTIALS_IN_PATH = [/(\/workflows\/hooks\/)[^/?#]+/, /(\/t\/l\/)[^/?#]+/];

/** The path of a request URL as logs show it: no query string, no credential. */
export function loggablePath(url: string): string {
  return CREDENTIALS_IN_PATH.reduce((path, pattern) => path.replace(pattern, '$1[redacted]'), url.split('?')[0] ?? '');
}

/** `stream`: where the lines go (standard output unless given; tests read them). */
export function loggerOptions(level: string, stream?: DestinationStream): NonNullable<FastifyServerOptions['logger']> {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, path: loggablePath(req.url), id: req.id }),
    },
    ...(stream ? { stream } : {}),
  };
}

/**
 * Standard output as a server process writes its log lines there: one asynchronous writer, which the process's own
 * logger and Fastify's both use, so lines keep the order they were logged in and a slow reader never blocks the event
 * loop. `minLength: 1` instead of pino's 0, which writes every line as soon as it is logged all the same: with 0,
 * sonic-boom's `flush(cb)` does nothing and calls back at once (as its README says), so a process could not wait for
 * a write still in flight before it exits (exitAfterLog).
 */
export function logDestination() {
  return pino.destination({ dest: 1, minLength: 1, sync: false });
}

/**
 * Exits once every line written to `destination` so far has reached it. A write held back by a full pipe (a loaded
 * machine, a slow log shipper) is still in flight when the last line is logged: exiting then lost it, or wrote the
 * lines after it first. Bounded, for an output that no longer drains.
 */
export function exitAfterLog(destination: ReturnType<typeof logDestination>, code: number): void {
  setTimeout(() => process.exit(code), 2_000).unref();
  destination.flush(() => process.exit(code));
}
