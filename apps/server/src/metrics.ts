import { timingSafeEqual } from 'node:crypto';
import { bearerToken, type Deps, errors, toPublicError } from '@leadwire/core';
import { httpDuration, httpRequests, renderMetrics, UNMATCHED_ROUTE } from '@leadwire/core/runtime';
import type { PgDb } from '@leadwire/db';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { requestIdOf } from './http/request-id.ts';

/**
 * A route template set by a surface that serves many routes through one Fastify route (the REST surfaces, whose
 * Fastify route is a wildcard): its own template, or UNMATCHED_ROUTE for a path it does not serve.
 */
const templates = new WeakMap<FastifyRequest, string>();

export function setRouteTemplate(req: FastifyRequest, template: string): void {
  templates.set(req, template);
}

/** Methods outside this list (Fastify answers a few more, e.g. PROPFIND, with 404) share one label. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route label: never the raw URL, so that ids in paths and scanners' random paths add no series. */
export function routeOf(req: FastifyRequest): string {
  return templates.get(req) ?? (req.routeOptions.url || UNMATCHED_ROUTE);
}

/** Counts every answered request of `app` by method, route template and status, with its latency. */
export function countRequests(app: FastifyInstance): void {
  app.addHook('onResponse', async (req, reply) => {
    const method = METHODS.has(req.method) ? req.method : 'other';
    const route = routeOf(req);
    httpRequests.inc({ method, route, status: String(reply.statusCode) });
    httpDuration.observe({ method, route }, reply.elapsedTime / 1000);
  });
}

/** The scheme is read as every route reads it, case aside (RFC 7235: `bearer` is `Bearer`); the token exactly. */
function sameToken(header: string | undefined, token: string): boolean {
  const a = Buffer.from(bearerToken(header) ?? '');
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** GET /metrics, in Prometheus's text format; behind METRICS_TOKEN when one is set. */
export function metricsRoute(app: FastifyInstance, deps: Deps, pools: Record<string, PgDb>): void {
  app.get('/metrics', async (req, reply) => {
    const token = deps.config.METRICS_TOKEN;
    if (token && !sameToken(req.headers.authorization, token)) {
      const pub = toPublicError(errors.unauthorized('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>'));
      // As every other refusal: the request's id in the body and the header, for an operator quoting it.
      return reply
        .status(pub.status)
        .headers({ 'www-authenticate': 'Bearer', 'x-request-id': String(req.id) })
        .send({ ...pub.body, requestId: String(req.id) });
    }
    const { contentType, text } = await renderMetrics(deps, pools);
    return reply.type(contentType).header('cache-control', 'no-store').send(text);
  });
}

/**
 * The listener of METRICS_PORT: /metrics alone (and /healthz for the probe of a worker, which serves nothing else),
 * apart from the public port so that it can be kept on a private network.
 */
export async function buildMetricsApp(deps: Deps, pools: Record<string, PgDb>): Promise<FastifyInstance> {
  // Request ids as the public port makes them: the client's sane X-Request-Id, else a new one, sent back on every answer.
  const app = Fastify({ logger: false, requestIdHeader: false, genReqId: requestIdOf });
  app.addHook('onRequest', async (req, reply) => void reply.header('x-request-id', req.id));
  app.get('/healthz', async () => ({ status: 'ok' }));
  metricsRoute(app, deps, pools);
  return app;
}
