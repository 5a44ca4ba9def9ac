import type { Deps } from '@leadwire/core';
import { pendingMigrations, qb, sql, statement } from '@leadwire/db';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import { capturePlugin } from './http/capture.ts';
import { consolePlugin } from './http/console.ts';
import { edgeHandlers, edgeOptions } from './http/edge.ts';
import { formsPlugin } from './http/forms.ts';
import { internalRestPlugin, internalTrpcPlugin } from './http/internal.ts';
import { listenPlugin } from './http/listen.ts';
import { pagesPlugin } from './http/pages.ts';
import { consentPagesPlugin } from './http/consent-pages.ts';
import { requestIdOf } from './http/request-id.ts';
import { requestScope } from './http/request-scope.ts';
import { trackingPlugin } from './http/tracking.ts';
import { uploadsPlugin } from './http/uploads.ts';
import { v1Plugin } from './http/v1.ts';
import { loggablePath, loggerOptions } from './logger.ts';
import { countRequests, metricsRoute } from './metrics.ts';
import type { PgDb } from '@leadwire/db';

/** The readiness probe's round trip: no table, so it answers while any migration is pending. */
const PING = statement()(() => qb.selectNoFrom(sql<number>`1`.as('up')));

/** A hop count trusts that many proxies nearest to us; Fastify takes it as a function. */
function trustProxy(setting: boolean | number | string[] | undefined) {
  return typeof setting === 'number' ? (_address: string, hop: number) => hop < setting : (setting ?? false);
}

/** Builds the HTTP app without listening; the entry point (or a test) decides where it listens. */
export async function buildApp(
  deps: Deps,
  opts: {
    logger?: boolean;
    /** Where Fastify's log lines go: the process's own destination (main.ts), so both keep one order; a test's. */
    logStream?: DestinationStream;
    metricsPools?: Record<string, PgDb>;
    /** Hooks that must see every request, added before any other (tracing). */
    instrument?: (app: FastifyInstance) => void;
  } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger === false ? false : loggerOptions(deps.config.LOG_LEVEL, opts.logStream),
    // One line per request from our onResponse hook instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1_048_576,
    // Sign-in throttling keys on the client address, so behind a proxy it must be the forwarded one.
    trustProxy: trustProxy(deps.config.TRUST_PROXY),
    routerOptions: { maxParamLength: 5000 },
    requestIdHeader: false,
    genReqId: requestIdOf,
    ...edgeOptions(deps.config),
  });
  opts.instrument?.(app);
  // trpc-to-openapi strips its prefix from the raw URL, and originalUrl is only read from it when first asked for: the
  // path is taken on arrival, or the REST routes would be logged without /api (/api/v1). The first hook, so that the
  // edge's own refusals in later hooks carry the request id too.
  const arrivedAs = new WeakMap<object, string>();
  app.addHook('onRequest', async (req, reply) => {
    arrivedAs.set(req, loggablePath(req.originalUrl));
    void reply.header('x-request-id', req.id);
    // Also on the raw response: the connection guard answers slow bodies there, outside Fastify's reply.
    reply.raw.setHeader('x-request-id', req.id);
  });
  requestScope(app);
  edgeHandlers(app, deps.config);
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      {
        method: req.method,
        path: arrivedAs.get(req) ?? loggablePath(req.originalUrl),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  if (deps.config.METRICS_ENABLED) {
    countRequests(app);
    // With METRICS_PORT set, /metrics lives on that listener only (main.ts), off the public port.
    if (deps.config.METRICS_PORT === undefined) metricsRoute(app, deps, opts.metricsPools ?? { request: deps.db });
  }

  let migrated = false;
  app.get('/readyz', async (_req, reply) => {
    try {
      // On the request pool, so that a stalled database is reported within its time-outs instead of hanging the probe.
      await deps.db.run(PING, {});
      migrated ||= (await pendingMigrations(deps.orm)).length === 0;
      if (!migrated) return reply.status(503).send({ status: 'migrations pending' });
      return { status: 'ready' };
    } catch {
      return reply.status(503).send({ status: 'database unreachable' });
    }
  });

  await app.register(v1Plugin, { prefix: '/api/v1', deps });
  await app.register(internalTrpcPlugin, { prefix: '/api/trpc', deps });
  await app.register(internalRestPlugin, { prefix: '/api', deps });
  await app.register(uploadsPlugin, { prefix: '/api', deps });
  await app.register(listenPlugin, { prefix: '/api', deps });
  await app.register(trackingPlugin, { prefix: '/api', deps });
  await app.register(pagesPlugin, { deps });
  await app.register(consentPagesPlugin, { deps });
  await app.register(formsPlugin, { deps });
  await app.register(capturePlugin, { deps });
  await app.register(consolePlugin, { deps });
  return app;
}
