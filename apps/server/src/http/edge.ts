import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { type Config, errors, type PublicError, toPublicError } from '@leadwire/core';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import { refusals } from '@leadwire/core/runtime';
import { type CloseReason, ConnectionGuard, type GuardLimits } from './connection-guard.ts';
import { sendError } from './rest-surface.ts';
import { logFailure } from './log-failure.ts';

/**
 * The HTTP edge: what happens before a route runs or outside every route. Each answer here is `{ error, code }` from
 * the one error model, like the answers of the surfaces themselves: connection-level failures (slow or oversized
 * requests, bytes that are not HTTP), URLs the router cannot decode, paths outside /api, and requests that arrive
 * while the process is shutting down.
 */

/** Seconds a client is told to wait when it reached a process that is shutting down; another one can serve it. */
const RETRY_AFTER_SHUTDOWN_S = 1;

/** The error a connection-level failure is answered with; undefined when there is nobody left to answer. */
function clientErrorOf(err: NodeJS.ErrnoException): PublicError | undefined {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return toPublicError(errors.requestTimeout());
    case 'HPE_HEADER_OVERFLOW':
      return toPublicError(errors.headersTooLarge());
    default:
      return toPublicError(errors.badHttpRequest());
  }
}

/**
 * A response written straight to the socket: Node's HTTP layer has no request object for these failures, so the id is
 * made here (an incoming one cannot be trusted to have been read whole) and also goes into the log line about it.
 */
function rawResponse(pub: PublicError, requestId: string): string {
  const body = JSON.stringify({ ...pub.body, requestId });
  const head = [
    `HTTP/1.1 ${pub.status} ${STATUS_CODES[pub.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    `x-request-id: ${requestId}`,
    ...Object.entries(pub.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Node's `clientError`, answered the way Node itself does (only when nothing of another response went out on this
 * socket yet), in our shape, and then the connection is closed.
 */
function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket) {
  const pub = clientErrorOf(err);
  if (!pub || socket.destroyed) return;
  const reqId = randomUUID();
  // request_timeout, headers_too_large, or bytes that are not HTTP: slow, oversized or garbled requests.
  refusals.inc({ reason: pub.body.code === 'bad_request' ? 'not_http' : pub.body.code });
  this.log.debug({ reqId, code: err.code, status: pub.status }, 'client error');
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.end(rawResponse(pub, reqId));
  // end() flushes the answer first; destroySoon keeps a slow client from holding the socket half-open.
  socket.destroySoon();
}

const BODY_TOO_SLOW = toPublicError(errors.requestTimeout('The request body arrived too slowly or stopped; the connection is closed'));
const GUARD_WARN_EVERY_MS = 60_000;

/** Seconds a shed client is told to wait: room is made again with every connection that arrives. */
const RETRY_AFTER_SHED_S = 1;
const SHED = toPublicError(
  errors.serviceUnavailable('The server is at its connection limit and closed this slow connection; retry shortly', RETRY_AFTER_SHED_S),
);

/** Behind TRUST_PROXY the socket's address is the proxy's; the client's is only known from each request's headers. */
const direct = (trust: Config['TRUST_PROXY']) => !trust || (Array.isArray(trust) && trust.length === 0);

/** The guard's reasons as refusal reasons: `refused` is the per-address connection cap met at accept. */
const GUARD_REASONS: Record<CloseReason, string> = { refused: 'too_many_connections', body_timeout: 'body_timeout', shed: 'shed' };

/** The connection policy of connection-guard.ts, on this app's server. */
function guardConnections(app: FastifyInstance, config: Config) {
  const limits: GuardLimits = {
    shedAt: Math.floor((config.HTTP_MAX_CONNECTIONS * config.HTTP_SHED_AT_PERCENT) / 100),
    shedMinAgeMs: config.HTTP_SHED_MIN_AGE_MS,
    perAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    perAddressAtAccept: direct(config.TRUST_PROXY),
    bodyGraceMs: config.HTTP_BODY_GRACE_MS,
    bodyMinRate: config.HTTP_BODY_MIN_RATE_BYTES_PER_S,
    bodyIdleMs: config.HTTP_BODY_IDLE_TIMEOUT_MS,
  };
  let warnedAt = -Infinity;
  const guard = new ConnectionGuard(limits, (socket, res, reason) => {
    refusals.inc({ reason: GUARD_REASONS[reason] });
    app.log.debug({ reason, address: socket.remoteAddress }, 'connection closed by the guard');
    // Under attack this runs thousands of times a second: one line a minute tells the operator, with the totals.
    if (performance.now() - warnedAt >= GUARD_WARN_EVERY_MS) {
      warnedAt = performance.now();
      app.log.warn({ ...guard.counts, open: guard.open }, 'closing slow or excess connections (totals since start)');
    }
    // Only a request still being received is answered; an idle or silent connection has nothing to hear.
    if (!res || res.headersSent || !socket.writable) return void socket.destroy();
    // The app's first hook put the request's id on the raw response (before the body is read), so the id matches.
    const reqId = String(res.getHeader('x-request-id') ?? randomUUID());
    app.log.debug({ reqId, reason }, 'request answered by the guard');
    socket.end(rawResponse(reason === 'shed' ? SHED : BODY_TOO_SLOW, reqId));
    socket.destroySoon();
  });
  app.server.on('connection', (socket: Socket) => guard.accept(socket));
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => guard.request(req, res));
  if (!limits.perAddressAtAccept) {
    app.addHook('onRequest', async (req, reply) => {
      if (!guard.claim(req.raw.socket, req.ip))
        return sendError(reply, toPublicError(errors.tooManyConnections()), { connection: 'close' });
    });
  }
  app.addHook('onClose', async () => guard.stop());
}

/** Fastify options of the edge: time-outs, connection cap and the handlers of errors raised before routing. */
export function edgeOptions(config: Config): FastifyHttpOptions<Server> {
  return {
    http: {
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      // Node checks the two time-outs above on this interval (30 s by default), so it bounds their precision.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.HTTP_HEADERS_TIMEOUT_MS / 4))),
    },
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // Answered by the closing hook of `edgeHandlers` instead, in our shape and with Retry-After.
    return503OnClosing: false,
    clientErrorHandler,
    frameworkErrors: (err, req, reply) => {
      const pub = toPublicError(err.code === 'FST_ERR_BAD_URL' ? errors.malformedUrl() : errors.badHttpRequest());
      req.log.info({ code: err.code }, 'request refused before routing');
      void sendError(reply, pub);
    },
  };
}

/**
 * True when the query string's percent-escapes do not decode to UTF-8 (`?q=%FF`). Parsers replace such bytes with
 * U+FFFD and the search or filter would then run on text the client never sent; like a body, it is refused instead.
 */
function malformedQuery(url: string): boolean {
  const at = url.indexOf('?');
  if (at < 0 || !url.includes('%', at)) return false;
  try {
    decodeURIComponent(url.slice(at + 1).replace(/\+/g, ' '));
    return false;
  } catch {
    return true;
  }
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Root handlers: shutdown refusals, and errors and unknown paths outside the /api surfaces (which have their own). */
export function edgeHandlers(app: FastifyInstance, config: Config) {
  // Node closes connections over the cap as they are accepted, before a byte is read: there is no request to answer.
  // The guard sheds below it, so this hard cap is only met by a burst of connections too young to shed.
  app.server.maxConnections = config.HTTP_MAX_CONNECTIONS;
  guardConnections(app, config);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Requests still arriving on open connections while in-flight work drains: refused so the client retries elsewhere.
  app.addHook('onRequest', async (req, reply) => {
    if (closing) {
      const pub = toPublicError(errors.serviceUnavailable('The server is shutting down; retry shortly', RETRY_AFTER_SHUTDOWN_S));
      return sendError(reply, pub, { connection: 'close' });
    }
    if (malformedQuery(req.url)) {
      return sendError(reply, toPublicError(errors.malformedUrl('The query string is not valid percent-encoded UTF-8')));
    }
  });

  app.setErrorHandler((err, req, reply) => {
    const pub = toPublicError(err);
    logFailure(req.log, err, pub, 'request failed');
    return sendError(reply, pub);
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allow = METHODS.filter((method) => method !== req.method && app.hasRoute({ method, url: path }));
    if (allow.length) {
      const message = `Method ${req.method} is not allowed here; use ${allow.join(' or ')}`;
      return sendError(reply, { status: 405, body: { error: message, code: 'method_not_allowed' } }, { allow: allow.join(', ') });
    }
    return sendError(reply, { status: 404, body: { error: `No such endpoint: ${req.method} ${path}`, code: 'not_found' } });
  });
}
