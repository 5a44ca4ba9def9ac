import type { Config } from '@leadwire/core/boot';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** What the boot decided about tracing; `off` loads nothing of the SDK. */
export type TracingPlan =
  | { on: false; why: string }
  | { on: true; protocol: 'http/protobuf' | 'http/json'; endpoint: string; serviceName: string };

/** The OTLP/HTTP default of the specification, for `OTEL_TRACES_EXPORTER=otlp` without an endpoint. */
const DEFAULT_ENDPOINT = 'http://localhost:4318';

/**
 * Tracing is on when it is asked for, and off by default:
 * - `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`: off, whatever else is set;
 * - `OTEL_TRACES_EXPORTER=otlp`, or an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`):
 *   on, exporting to that endpoint (the specification's localhost:4318 when only the exporter is named);
 * - nothing of these: off.
 * An endpoint alone turns tracing on because setting one is how an operator says where traces go; the SDK's own
 * default (export to localhost whenever the SDK is present) would make every deployment trace.
 */
export function tracingPlan(c: Config): TracingPlan {
  if (c.OTEL_SDK_DISABLED === 'true') return { on: false, why: 'OTEL_SDK_DISABLED=true' };
  if (c.OTEL_TRACES_EXPORTER === 'none') return { on: false, why: 'OTEL_TRACES_EXPORTER=none' };
  const endpoint = c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? c.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (c.OTEL_TRACES_EXPORTER !== 'otlp' && !endpoint) return { on: false, why: 'no OTLP endpoint or exporter set' };
  const target = new URL(c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/v1/traces`);
  // Logged at boot: a collector's credentials may sit in the URL's user part or query.
  target.username = '';
  target.password = '';
  target.search = '';
  return {
    on: true,
    protocol: c.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? c.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    /** Where spans go, without credentials: for the boot log. */
    endpoint: target.href,
    serviceName: c.OTEL_SERVICE_NAME ?? 'leadwire',
  };
}

/** A running tracer: what the entry point hands to the app and calls on shutdown. */
export interface Tracing {
  /**
   * Adds the route template (`routeOf`, the metrics' label) and the request id to each request's span; called on the
   * app before any route exists.
   */
  instrumentApp(app: FastifyInstance, routeOf: (req: FastifyRequest) => string): void;
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}
