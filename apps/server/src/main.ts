// Only the configuration, the logger (with its request-id mixin) and tracing are imported up front: when tracing is on, its instrumentations must
// be in place before `pg` and `node:http` are loaded (tracing/start.ts), so the rest of the server is imported after.
import { ConfigError, loadConfig } from '@leadwire/core/config';
import { requestIdMixin } from '@leadwire/core/request-scope';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { exitAfterLog, logDestination, REDACT_PATHS } from './logger.ts';
import { startTracing } from './tracing/start.ts';

/**
 * One entry point, three roles: `all` (default) serves HTTP and runs the job workers; `api` and `worker` split them
 * across processes that share one PostgreSQL.
 */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  // The mixin adds `reqId` to lines written as part of a request or of a job a request queued (workers included).
  const destination = logDestination();
  const log = pino({ level: config.LOG_LEVEL, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, mixin: requestIdMixin }, destination);
  const started = Date.now();
  const tracing = await startTracing(config, log);
  const [{ jobDefinitions }, { pumpOf }, { buildApp }, { compose }, { buildMetricsApp, routeOf }] = await Promise.all([
    import('./jobs.ts'),
    import('@leadwire/core/runtime'),
    import('./app.ts'),
    import('./compose.ts'),
    import('./metrics.ts'),
  ]);
  const runtime = await compose(config, log, {
    // The embedded PostgreSQL died and could not be restarted: a process manager (systemd, Docker's restart policy,
    // Kubernetes) can only help if we exit, and non-zero.
    onDatabaseLost: (err) => {
      log.fatal({ err }, 'embedded PostgreSQL could not be restarted; exiting');
      exitAfterLog(destination, 1);
    },
  });
  const serveHttp = config.ROLE !== 'worker';
  const metricsPools = { request: runtime.deps.db, jobs: runtime.jobDeps.db };
  const instrument = tracing ? { instrument: (a: FastifyInstance) => tracing.instrumentApp(a, routeOf) } : {};
  const app = serveHttp ? await buildApp(runtime.deps, { metricsPools, logStream: destination, ...instrument }) : undefined;
  // A worker has no HTTP of its own: it serves /metrics only on METRICS_PORT.
  const metricsApp =
    config.METRICS_ENABLED && config.METRICS_PORT !== undefined ? await buildMetricsApp(runtime.deps, metricsPools) : undefined;
  if (config.ROLE !== 'api') {
    // The pump takes its worker lock first: a delivery job may only run once this process's key is held.
    await pumpOf(runtime.jobDeps).start();
    await runtime.boss.work(jobDefinitions(runtime.jobDeps));
  }
  if (app) await app.listen({ port: config.PORT, host: config.HOST });
  if (metricsApp) await metricsApp.listen({ port: config.METRICS_PORT, host: config.HOST });
  log.info(
    {
      role: config.ROLE,
      port: serveHttp ? config.PORT : undefined,
      metricsPort: metricsApp ? config.METRICS_PORT : undefined,
      baseUrl: config.BASE_URL,
      ms: Date.now() - started,
      embeddedDatabase: !config.DATABASE_URL,
      tracing: Boolean(tracing),
    },
    'leadwire ready',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error({}, 'shutdown timed out; exiting');
      exitAfterLog(destination, 1);
    }, config.SHUTDOWN_TIMEOUT_MS + 5_000);
    force.unref();
    try {
      // Stop accepting, let in-flight requests finish, then the workers, the pool and the database.
      // Node closes idle keep-alive connections once, when closing starts; a connection that was busy then would
      // hold close() open, so idle ones are swept until the last in-flight request is done.
      const sweep = setInterval(() => app?.server.closeIdleConnections(), 100);
      try {
        await app?.close();
        await metricsApp?.close();
      } finally {
        clearInterval(sweep);
      }
      log.info({}, 'http closed; stopping workers and database');
      await runtime.close();
      // Last, so that the spans of the work finished above are exported too.
      await tracing?.shutdown();
      log.info({}, 'stopped');
      exitAfterLog(destination, 0);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      exitAfterLog(destination, 1);
    }
  };
  // SIGHUP too (the terminal closed): left to Node's default, the process would end at once and leave its embedded
  // PostgreSQL, which runs in a process group of its own, for the next start to clean up.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));
}

main().catch((err: unknown) => {
  process.stderr.write(`leadwire failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
