import {
  type Deps,
  deprecationHeaders,
  errors,
  jobsOfRequest,
  matchRoute,
  type PublicError,
  type RequestContext,
  restRoutes,
  toPublicError,
  unknownQueryKeys,
} from '@leadwire/core';
import type { AnyTRPCRouter } from '@trpc/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CreateOpenApiFastifyPluginOptions } from 'trpc-to-openapi';
import { directRoutes } from './direct-routes.ts';
import { addJsonBodyParser } from './json-body.ts';
import { logFailure } from './log-failure.ts';
import { isBodiless, patchTrpcOpenApiFastify, trpcOpenApiPlugin } from './trpc-openapi-fastify.ts';
import { setRouteTemplate } from '../metrics.ts';
import { refusals, UNMATCHED_ROUTE } from '@leadwire/core/runtime';

declare module 'fastify' {
  interface FastifyRequest {
    publicError?: PublicError;
  }
}

/**
 * Every JSON error answer: the body carries the request's id as `requestId` (and the header as `x-request-id`, also
 * for answers sent before the app's hooks ran), so that a client quoting either one finds the request's log lines.
 */
/** Refusals of the edge answered here, counted by their code (the others are counted where they are decided). */
const EDGE_REFUSALS = new Set(['payload_too_large', 'malformed_json', 'malformed_url', 'too_many_connections']);

export function sendError(reply: FastifyReply, err: PublicError, extraHeaders: Record<string, string> = {}) {
  const requestId = String(reply.request.id);
  if (EDGE_REFUSALS.has(err.body.code)) refusals.inc({ reason: err.body.code });
  return reply
    .status(err.status)
    .headers({ ...err.headers, ...extraHeaders, 'x-request-id': requestId })
    .type('application/json')
    .send({ ...err.body, requestId });
}

export function createRequestContext(deps: Deps, req: FastifyRequest, reply: FastifyReply): RequestContext {
  const requestId = String(req.id);
  return {
    // Shared as it is: some parts keep per-process state keyed on it (the key guard, the listen hub).
    deps,
    jobs: jobsOfRequest(deps.jobs, requestId),
    db: deps.db,
    requestId,
    ip: req.ip,
    log: req.log,
    header: (name) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    },
    setHeader: (name, value) => void reply.header(name, value),
  };
}

/**
 * A REST surface served by trpc-to-openapi in the caller's encapsulated scope, with one error shape
 * `{ error, code }` for everything that can go wrong there, framework errors (bad JSON, wrong content type, 413,
 * unknown path, wrong method) included. The caller registers CORS and its docs under `/docs` first.
 */
/**
 * `strictQuery`: every GET route refuses query parameters its input does not name (the internal surface), instead of
 * ignoring them; a misspelt filter (`?emial=`) would otherwise answer as if there were no filter at all. /v1 keeps
 * ignoring them on its first routes (its versioning rules); its read routes have strict input schemas instead, which
 * refuse them after authentication, as every /v1 input is judged.
 */
export async function restSurface(app: FastifyInstance, opts: { deps: Deps; router: AnyTRPCRouter; strictQuery?: boolean }) {
  const { deps, router } = opts;
  const routes = restRoutes(router);
  const successStatus = new Map(routes.map((r) => [r.procedure, r.successStatus]));

  app.setErrorHandler((err, req, reply) => {
    const pub = toPublicError(err);
    logFailure(req.log, err, pub, 'request failed');
    return sendError(reply, pub);
  });
  app.setNotFoundHandler((req, reply) =>
    sendError(reply, { status: 404, body: { error: `No such endpoint: ${req.method} ${req.url.split('?')[0]}`, code: 'not_found' } }),
  );

  // A DELETE carries no body; clients that send `content-type: application/json` on every request (automation
  // platforms among them) send it with an empty one, which is no body, not malformed JSON.
  addJsonBodyParser(app, { empty: (req) => (isBodiless(req) || req.method === 'DELETE' ? { value: {} } : undefined) });
  // No abort per answered request, `Application/JSON` accepted, a bodiless POST read as `{}`: see the adapter file.
  patchTrpcOpenApiFastify(app);

  // Unknown paths and wrong methods are answered before authentication, the way clients expect them to be.
  app.addHook('onRequest', async (req, reply) => {
    if (req.method === 'OPTIONS') return;
    const pathname = (req.url.split('?')[0] ?? '').slice(app.prefix.length) || '/';
    if (pathname.startsWith('/docs')) return;
    const m = matchRoute(routes, req.method, pathname);
    setRouteTemplate(req, m.kind === 'ok' ? `${app.prefix}${m.route.path}` : UNMATCHED_ROUTE);
    if (m.kind === 'not_found') {
      return sendError(reply, {
        status: 404,
        body: { error: `No such endpoint: ${req.method} ${app.prefix}${pathname}`, code: 'not_found' },
      });
    }
    if (m.kind === 'method_not_allowed') {
      return sendError(
        reply,
        {
          status: 405,
          body: { error: `Method ${req.method} is not allowed here; use ${m.allow.join(' or ')}`, code: 'method_not_allowed' },
        },
        { allow: m.allow.join(', ') },
      );
    }
    // Every answer of a deprecated operation says so, refusals included: a partner sees it whatever went wrong.
    if (m.route.deprecated) void reply.headers(deprecationHeaders(m.route.deprecated));
    // Like the path and the method, the parameter names are the published contract, checked before authentication.
    if (opts.strictQuery && m.route.method === 'GET') {
      const unknown = unknownQueryKeys(m.route, req.query as Record<string, unknown>);
      if (unknown.length > 0) {
        const issues = unknown.map((k) => ({ path: k, message: `unknown query parameter ${JSON.stringify(k)}` }));
        const known = [...(m.route.inputKeys ?? [])].filter((k) => !m.route.path.includes(`{${k}}`));
        const hint = known.length ? `; this route takes ${known.join(', ')}` : '; this route takes no query parameters';
        return sendError(
          reply,
          toPublicError(errors.validation(issues, `Validation failed: unknown query parameter ${unknown.join(', ')}${hint}`)),
        );
      }
    }
  });

  // The REST adapter spreads a body into the input beside the path parameters, so a JSON array, string or number would
  // arrive as an object of its indexes and be judged by the wrong rule (an array posted to a workflow intake read as
  // "no email"). Every body of this surface is a JSON object; anything else is refused as such, like malformed JSON.
  app.addHook('preHandler', async (req, reply) => {
    const body: unknown = req.body;
    // Other media types are the adapter's to refuse (415), whatever Fastify parsed them into.
    if (!req.headers['content-type']?.startsWith('application/json')) return;
    if (body === undefined || (typeof body === 'object' && body !== null && !Array.isArray(body))) return;
    const kind = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
    const issue = { path: '', message: `must be a JSON object, not ${kind}` };
    return sendError(reply, toPublicError(errors.validation([issue], `Validation failed: the body must be a JSON object, not ${kind}`)));
  });

  // trpc-to-openapi writes its own error body; ours replaces it, taken from the error itself rather than re-parsed.
  app.addHook('onSend', async (req, _reply, payload) =>
    req.publicError ? JSON.stringify({ ...req.publicError.body, requestId: String(req.id) }) : payload,
  );

  await app.register(trpcOpenApiPlugin, {
    basePath: '/',
    router,
    createContext: ({ req, res }) => createRequestContext(deps, req, res),
    onError: ({ error, req }) => {
      const pub = toPublicError(error);
      (req as FastifyRequest).publicError = pub;
      logFailure((req as FastifyRequest).log, error, pub, 'procedure failed');
    },
    responseMeta: ({ errors, paths }) => {
      if (errors[0]) {
        const { status, headers } = toPublicError(errors[0]);
        return { status, ...(headers ? { headers: { ...headers } } : {}) };
      }
      return { status: successStatus.get(paths?.[0] ?? '') ?? 200 };
    },
  } satisfies CreateOpenApiFastifyPluginOptions<AnyTRPCRouter>);
  // Beside the adapter's catch-all, which they take precedence over.
  directRoutes(app, {
    router,
    routes,
    context: (req, reply) => createRequestContext(deps, req, reply),
    fail: (req, reply, err) => {
      const pub = toPublicError(err);
      logFailure(req.log, err, pub, 'procedure failed');
      return sendError(reply, pub);
    },
  });
}
