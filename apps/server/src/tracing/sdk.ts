import { DiagLogLevel, diag, trace } from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Config } from '@leadwire/core/boot';
import type { Logger } from 'pino';
import { loggablePath } from '../logger.ts';
import { attemptTracer } from './delivery.ts';
import { traceRoutes } from './http.ts';
import type { Tracing, TracingPlan } from './settings.ts';

/**
 * The longest a shutdown waits for the last spans to reach the collector. Each export is bounded by
 * OTEL_EXPORTER_OTLP_TIMEOUT (10 s by default), which alone would eat the process manager's grace period when the
 * collector is down; spans still unsent then are dropped.
 */
const SHUTDOWN_FLUSH_MS = 3_000;

/** Probes and scrapes, every few seconds from every monitor: traces of them would bury the requests that matter. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The SDK, loaded only when tracing is on (start.ts). The exporter reads the rest of the standard variables itself
 * (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION), the batch processor OTEL_BSP_*, the sampler OTEL_TRACES_SAMPLER.
 */
export async function startSdk(plan: Extract<TracingPlan, { on: true }>, config: Config, log: Logger): Promise<Tracing> {
  // Export failures would otherwise vanish: the API's default diagnostic logger is silent.
  diag.setLogger(
    {
      error: (msg) => log.warn({ component: 'opentelemetry' }, msg),
      warn: (msg) => log.warn({ component: 'opentelemetry' }, msg),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  // Only the exporter of the protocol in use is loaded (the protobuf one brings protobufjs).
  const { OTLPTraceExporter } =
    plan.protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  const exporter = new OTLPTraceExporter();
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': plan.serviceName, 'leadwire.role': config.ROLE }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator (`traceparent` from callers).
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        // Outgoing requests are webhook attempts (their own span, delivery.ts) and the exporter's own posts; the
        // instrumentation would also add `traceparent` to what third-party receivers get.
        disableOutgoingRequestInstrumentation: true,
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
        // The path as logs show it (credentials in a path redacted) and no query string: tokens travel there.
        startIncomingSpanHook: (req) => ({ 'url.path': loggablePath(req.url ?? ''), 'url.query': undefined }),
      }),
      // SQL text only, never the parameters (enhancedDatabaseReporting stays off). Only statements inside a traced
      // operation: pg-boss's polling and the pump's rounds would otherwise be a root trace each, several a second. No
      // span for taking a pooled connection: it doubled the spans of a request, and a wait shows as the gap before the
      // statement's span (and in leadwire_db_pool_waiting).
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false, ignoreConnectSpans: true }),
    ],
  });
  // Only now: the runtime loads pg (through pg-boss and @leadwire/db), which the instrumentation must see being loaded.
  const { setAttemptTracer } = await import('@leadwire/core/runtime');
  setAttemptTracer(attemptTracer(trace.getTracer('leadwire')));
  return {
    instrumentApp: (app, routeOf) => traceRoutes(app, routeOf),
    shutdown: async () => {
      setAttemptTracer(undefined);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          log.warn({ ms: SHUTDOWN_FLUSH_MS }, 'traces not all exported at shutdown; the rest are dropped');
          resolve();
        }, SHUTDOWN_FLUSH_MS);
      });
      await Promise.race([provider.shutdown(), late]);
      clearTimeout(timer);
    },
  };
}
