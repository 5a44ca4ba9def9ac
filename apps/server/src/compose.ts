import { type Clock, type Config, type Deps, type Logger, type Random, systemClock, systemRandom } from '@leadwire/core';
import {
  BossRuntime,
  keyGuardOf,
  listenForWork,
  notifyWorkers,
  PUMP_WAKE_CHANNEL,
  pumpOf,
  refreshWildcards,
  type Resolver,
  setPasswordHashCost,
  setPasswordHashSlots,
  startApiUsageFlush,
  systemResolver,
  watchKeyChanges,
} from '@leadwire/core/runtime';
import { jobDefinitions } from './jobs.ts';
import {
  type Channel,
  ChannelListener,
  KEY_CHANGES_CHANNEL,
  migrateUp,
  openDatabase,
  openDb,
  openOrm,
  openRequestDb,
  ReplicaSet,
} from '@leadwire/db';

export interface Runtime {
  deps: Deps;
  /**
   * The same, for background work (job handlers, the webhook pump): its statements run on the ORM's pool, without the
   * request path's time-outs, which the hourly cleanup's slices and the nightly purge may outlast.
   */
  jobDeps: Deps;
  boss: BossRuntime;
  /**
   * The channel that keeps the key guard told of key changes; null in a worker, which serves no keys. It and `pumpWake`
   * share the process's one LISTEN connection of ours (pg-boss has its own, and listen streams hold one while any is
   * open): a loss takes both down and back up together.
   */
  keyChanges: Channel | null;
  /**
   * The channel on which other processes wake this one's webhook pump (wake.ts); null in an api process, which runs no
   * pump and instead NOTIFYs the workers after its writes.
   */
  pumpWake: Channel | null;
  /** Stops the job queue, closes the pool and stops the embedded cluster if we started it: in that order. */
  close(): Promise<void>;
}

/**
 * Everything a process needs, built once: the database (embedded or DATABASE_URL), the ORM with migrations applied,
 * and the job queue. Both roles and the tests compose through here.
 */
export async function compose(
  config: Config,
  log: Logger,
  opts: { migrate?: boolean; clock?: Clock; random?: Random; resolver?: Resolver; onDatabaseLost?: (err: Error) => void } = {},
): Promise<Runtime> {
  setPasswordHashCost(config.PASSWORD_HASH_COST);
  setPasswordHashSlots({
    concurrency: config.PASSWORD_HASH_CONCURRENCY,
    queue: config.PASSWORD_HASH_QUEUE,
    maxWaitMs: config.PASSWORD_HASH_MAX_WAIT_MS,
  });
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    // An embedded server that dies is restarted in place; when that keeps failing, the entry point exits non-zero.
    supervise: {
      restartAttempts: config.DB_EMBEDDED_RESTART_ATTEMPTS,
      log,
      onGiveUp: opts.onDatabaseLost ?? ((err) => log.error({ err }, 'embedded PostgreSQL is gone for good')),
    },
  });
  try {
    const orm = await openOrm(database.url, { pool: { min: 0, max: config.DB_POOL_MAX } });
    if (opts.migrate !== false) {
      const applied = await migrateUp(orm);
      if (applied.length) log.info({ applied }, 'migrations applied');
    }
    const boss = new BossRuntime(database.url, log, { cronIntervalS: config.JOBS_CRON_INTERVAL_S });
    const onAfterCommitError = (err: unknown) => log.error({ err }, 'after-commit work failed');
    const requestDb = {
      max: config.DB_POOL_MAX,
      acquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: config.DB_LOCK_TIMEOUT_MS,
      queryTimeoutMs: config.DB_QUERY_TIMEOUT_MS,
      transactionTimeoutMs: config.DB_TRANSACTION_TIMEOUT_MS,
      onAfterCommitError,
    };
    const db = await openRequestDb(orm, { ...requestDb, onConnectionError: (err) => log.warn({ err }, 'database connection lost') });
    const clock = opts.clock ?? systemClock;
    // Reads are served by HTTP only: a worker opens no replica pool.
    const replicas =
      config.DATABASE_REPLICA_URLS.length === 0 || config.ROLE === 'worker'
        ? null
        : new ReplicaSet({
            primary: db,
            replicas: await Promise.all(
              config.DATABASE_REPLICA_URLS.map(async (url, i) => {
                const name = `replica${i + 1}`;
                const onConnectionError = (err: Error) => log.warn({ err, replica: name }, 'read replica connection lost');
                return { name, db: await openRequestDb(orm, { ...requestDb, url, applicationName: 'leadwire-reads', onConnectionError }) };
              }),
            ),
            maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
            checkMs: config.DATABASE_REPLICA_CHECK_MS,
            // Three probes missed, plus the longest a probe may wait on the replica's pool before it fails.
            staleAfterMs: 3 * config.DATABASE_REPLICA_CHECK_MS + config.DB_ACQUIRE_TIMEOUT_MS + config.DB_QUERY_TIMEOUT_MS,
            clock,
            log,
          });
    await replicas?.start();
    const deps: Deps = {
      orm,
      db,
      replicas,
      config,
      jobs: boss,
      log,
      clock,
      random: opts.random ?? systemRandom,
      resolver: opts.resolver ?? systemResolver,
      scoreAdjustment: Boolean(config.SCORE_ADJUSTER_URL),
    };
    const jobDeps: Deps = { ...deps, db: await openDb(orm, { onAfterCommitError }) };
    if (config.WEBHOOKS_UNSAFE_ALLOW_LOOPBACK) {
      log.warn({}, 'WEBHOOKS_UNSAFE_ALLOW_LOOPBACK=true: webhooks may be delivered to 127.0.0.0/8 and ::1. Never set this in production.');
    }
    // Endpoints on every event (`*`) get this version's catalogue before any event of it can be written.
    if (opts.migrate !== false) await refreshWildcards(jobDeps.db);
    await boss.start(jobDefinitions(jobDeps));
    // A worker serves no keys; an api process runs no pump. The default role does both.
    const servesKeys = config.ROLE !== 'worker';
    const runsPump = config.ROLE !== 'api';
    const notifications = new ChannelListener({
      url: database.url,
      channels: [...(servesKeys ? [KEY_CHANGES_CHANNEL] : []), ...(runsPump ? [PUMP_WAKE_CHANNEL] : [])],
      retryMs: config.KEY_CHANGES_RETRY_MS,
      log,
      applicationName: 'leadwire-notifications',
      timers: deps.clock,
    });
    const keyChanges = servesKeys ? watchKeyChanges(notifications.channel(KEY_CHANGES_CHANNEL), keyGuardOf(deps)) : null;
    // The pump's wake across processes (wake.ts): an api process tells the workers, a worker listens for it. A
    // process that does both wakes its own pump in memory.
    const pumpWake = runsPump
      ? listenForWork(notifications.channel(PUMP_WAKE_CHANNEL), () => {
          pumpOf(jobDeps).wake();
          pumpOf(deps).wake();
        })
      : null;
    // The first attempt is waited for (a failure is retried in the background): a server that can reach its database
    // starts with the key guard's memory on.
    await notifications.start();
    // A process that serves /v1 writes its request counts for the overview every few seconds (limits/api-usage.ts).
    const apiUsage = servesKeys ? startApiUsageFlush(deps) : null;
    const notifier = runsPump ? null : notifyWorkers(jobDeps.db, log);
    return {
      deps,
      jobDeps,
      boss,
      keyChanges,
      pumpWake,
      close: async () => {
        await notifications.close();
        await apiUsage?.stop();
        // The webhook pump stops handing out attempts first; its worker lock goes only after the queue drained, so no
        // attempt of this process ever looks orphaned while it is still being sent.
        // Tests drive a pump on the request deps too; both are stopped (a pump never started stops at once).
        const pumps = [pumpOf(jobDeps), pumpOf(deps)];
        for (const pump of pumps) await pump.stop();
        await boss.stop();
        for (const pump of pumps) await pump.release();
        await notifier?.stop();
        log.info({}, 'job queue stopped');
        await replicas?.close();
        await db.pool.end();
        await orm.close(true);
        await database.stop();
      },
    };
  } catch (err) {
    await database.stop();
    throw err;
  }
}
