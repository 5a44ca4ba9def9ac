import type { Config } from '@leadwire/core/boot';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { tracingPlan } from './settings.ts';

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

/**
 * Starts tracing when the configuration asks for it (settings.ts), before the rest of the server is imported: the
 * instrumentations patch `pg` and `node:http` as they are loaded, so anything loaded earlier would go untraced. Off,
 * it imports nothing of OpenTelemetry and returns undefined.
 */
export async function startTracing(config: Config, log: Logger): Promise<Tracing | undefined> {
  const plan = tracingPlan(config);
  if (!plan.on) return undefined;
  const { startSdk } = await import('./sdk.ts');
  const tracing = await startSdk(plan, config, log);
  log.info({ protocol: plan.protocol, endpoint: plan.endpoint, serviceName: plan.serviceName }, 'tracing on');
  return tracing;
}
