import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { AttemptTracer } from '@leadwire/core/runtime';

/**
 * One client span per webhook attempt, in the worker. Its trace is a new one: the event's outbox row carries no trace
 * context (a column per event for an optional feature), so the writing request's trace and the attempt's are joined
 * through the ids both carry (event id, delivery id). No `traceparent` is sent to the receiver: it is a third party,
 * our trace ids are nothing to it, and its own tracing would take them as its parent.
 */
export function attemptTracer(tracer: Tracer): AttemptTracer {
  return (info, send) => {
    const url = new URL(info.url);
    return tracer.startActiveSpan(
      'webhook attempt',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': 'POST',
          'url.scheme': url.protocol.replace(':', ''),
          // Host and port only: a receiver's path or query often is its credential.
          'server.address': url.hostname,
          'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
          'leadwire.webhook.delivery_id': info.deliveryId,
          'leadwire.webhook.event_id': info.eventId ?? undefined,
          'leadwire.webhook.event': info.event,
          'leadwire.webhook.endpoint_id': info.endpointId,
          'leadwire.organization_id': info.organizationId,
          'leadwire.webhook.attempt': info.attempt,
        },
      },
      async (span) => {
        try {
          const result = await send();
          span.setAttribute('leadwire.webhook.outcome', result.outcome);
          if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
          if (result.outcome !== 'succeeded') {
            span.setAttribute('error.type', result.statusCode === null ? result.outcome : String(result.statusCode));
            span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? `HTTP ${result.statusCode}` });
          }
          return result;
        } finally {
          span.end();
        }
      },
    );
  };
}
