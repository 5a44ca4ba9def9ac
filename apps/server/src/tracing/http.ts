import { type Span, trace } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Names each request's server span (made by the HTTP instrumentation, with the caller's `traceparent` as its parent)
 * by route template, as the metrics label it, and adds the request id, which the logs and error bodies carry too.
 * The name is set when the answer is sent: the instrumentation ends the span on `finish`, before Fastify's
 * onResponse hooks run.
 */
export function traceRoutes(app: FastifyInstance, routeOf: (req: FastifyRequest) => string): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook('onRequest', async (req) => {
    const span = trace.getActiveSpan();
    if (!span) return;
    spans.set(req, span);
    span.setAttribute('leadwire.request_id', req.id);
  });
  app.addHook('onSend', async (req) => {
    const span = spans.get(req);
    // Ended already when the client went away first (the instrumentation ends the span on the socket's close).
    if (!span?.isRecording()) return;
    const route = routeOf(req);
    span.updateName(`${req.method} ${route}`);
    span.setAttribute('http.route', route);
  });
}
