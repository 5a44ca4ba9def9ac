import type { Config } from '@leadwire/core/boot';
import type { Logger } from 'pino';
import { type Tracing, tracingPlan } from './settings.ts';

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
