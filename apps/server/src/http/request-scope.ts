import { AsyncResource } from 'node:async_hooks';
import { withRequestId } from '@leadwire/core/runtime';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Runs each request as part of itself (core's request-scope.ts), so the events it writes and the jobs it queues carry
 * its id. The body is read in the socket's own async context, not the request's: the handler would lose the scope, so
 * `preValidation` (after parsing) enters it again, as @fastify/request-context does.
 */
export function requestScope(app: FastifyInstance): void {
  const resources = new WeakMap<FastifyRequest, AsyncResource>();
  app.addHook('onRequest', (req, _reply, done) => {
    withRequestId(String(req.id), () => {
      const resource = new AsyncResource('leadwire.request');
      resources.set(req, resource);
      resource.runInAsyncScope(done, req.raw);
    });
  });
  app.addHook('preValidation', (req, _reply, done) => {
    const resource = resources.get(req);
    if (resource) resource.runInAsyncScope(done, req.raw);
    else done();
  });
}
