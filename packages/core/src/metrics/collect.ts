import { qb, sql, statement } from '@leadwire/db';
import type { PgDb } from '@leadwire/db';
import { Counter, Gauge, Registry } from 'prom-client';
import type { Deps } from '../context.ts';
import { metricsRegistry } from './registry.ts';

/**
 * The backlog in one statement: how many events wait for dispatch and when the oldest was written. outbox_pending
 * holds only undispatched events (dispatch deletes its rows), so it stays small while dispatch keeps up, and the oldest
 * row is read from its created_at index.
 */
const BACKLOG = statement()(() =>
  qb
    .selectFrom('outbox_pending')
    .select([sql<number>`count(*)::int`.as('pending'), sql<Date | string | null>`min(created_at)`.as('oldest')]),
);

/**
 * Per pg-boss queue (names fixed by the code: apps/server/src/jobs.ts), the jobs due and waiting for a worker and the
 * oldest one's due time. pg-boss's own partial index on waiting jobs (job_i11: state < 'active' and not blocked)
 * holds exactly these rows, so the cost follows the backlog, not the history. pg-boss's tables are not in the typed
 * schema, so this one is SQL as written.
 */
const QUEUE_LAG = `select q.name as queue, count(j.id)::int as ready, min(j.start_after) as oldest
  from pgboss.queue q
  left join pgboss.job j on j.name = q.name and j.state < 'active' and not j.blocked and j.start_after <= $1
  group by q.name`;

/**
 * The Prometheus text for a scrape: the process's counters plus the values read now (the pools, the outbox backlog).
 * Those are gathered into a registry of their own per scrape, so a process that hosts several runtimes (the tests)
 * reports the one it was asked about. `pools` names the pg pools to report, e.g. `{ request, jobs }`.
 */
export async function renderMetrics(
  deps: Pick<Deps, 'db' | 'clock' | 'replicas'>,
  pools: Record<string, PgDb>,
): Promise<{ contentType: string; text: string }> {
  const now = new Registry();
  replicaGauges(deps, now);
  const connections = new Gauge({
    name: 'leadwire_db_pool_connections',
    help: 'Connections of a database pool, by pool and state (in_use, idle)',
    labelNames: ['pool', 'state'] as const,
    registers: [now],
  });
  const waiting = new Gauge({
    name: 'leadwire_db_pool_waiting',
    help: 'Callers waiting for a connection of a database pool',
    labelNames: ['pool'] as const,
    registers: [now],
  });
  const roundTrips = new Counter({
    name: 'leadwire_db_round_trips_total',
    help: 'Round trips a database pool made to PostgreSQL (each statement, begin, commit or rollback is one)',
    labelNames: ['pool'] as const,
    registers: [now],
  });
  const transactions = new Counter({
    name: 'leadwire_db_transactions_total',
    help: 'Transactions a database pool opened with begin (a statement run on its own is one more, not counted here)',
    labelNames: ['pool'] as const,
    registers: [now],
  });
  for (const [pool, db] of Object.entries({ ...pools, ...deps.replicas?.pools() })) {
    const s = db.poolStats();
    connections.set({ pool, state: 'in_use' }, s.total - s.idle);
    connections.set({ pool, state: 'idle' }, s.idle);
    waiting.set({ pool }, s.waiting);
    roundTrips.inc({ pool }, db.traffic.roundTrips);
    transactions.inc({ pool }, db.traffic.transactions);
  }
  const pending = new Gauge({
    name: 'leadwire_outbox_pending',
    help: 'Events written but not yet dispatched to webhooks',
    registers: [now],
  });
  const age = new Gauge({
    name: 'leadwire_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest event not yet dispatched; 0 when none waits',
    registers: [now],
  });
  const ready = new Gauge({
    name: 'leadwire_queue_ready_jobs',
    help: 'Jobs of a pg-boss queue due now and not yet taken by a worker',
    labelNames: ['queue'] as const,
    registers: [now],
  });
  const lag = new Gauge({
    name: 'leadwire_queue_lag_seconds',
    help: 'How long the oldest due job of a pg-boss queue has waited for a worker; 0 when none waits',
    labelNames: ['queue'] as const,
    registers: [now],
  });
  const up = new Gauge({
    name: 'leadwire_database_up',
    help: 'Whether the scrape could read the database (1) or not (0)',
    registers: [now],
  });
  try {
    const [row] = await deps.db.run(BACKLOG, {});
    pending.set(row?.pending ?? 0);
    const oldest = row?.oldest ? new Date(row.oldest).getTime() : undefined;
    age.set(oldest === undefined ? 0 : Math.max(0, (deps.clock.now().getTime() - oldest) / 1000));
    const at = deps.clock.now();
    const { rows } = await deps.db.raw(QUEUE_LAG, [at]);
    for (const r of rows as { queue: string; ready: number; oldest: Date | string | null }[]) {
      ready.set({ queue: r.queue }, r.ready);
      lag.set({ queue: r.queue }, r.oldest ? Math.max(0, (at.getTime() - new Date(r.oldest).getTime()) / 1000) : 0);
    }
    up.set(1);
  } catch {
    // A scrape during a database outage still reports the process's counters, and says the database was not read.
    up.set(0);
  }
  const merged = Registry.merge([metricsRegistry, now]);
  return { contentType: merged.contentType, text: await merged.metrics() };
}

/** Each read replica as the process last probed it (DATABASE_REPLICA_CHECK_MS ago at most): up, and its replay lag. */
function replicaGauges(deps: Pick<Deps, 'replicas'>, registry: Registry): void {
  if (!deps.replicas) return;
  const up = new Gauge({
    name: 'leadwire_db_replica_up',
    help: 'Whether a read replica answered its last probe as a standby and gets reads when not lagging (1) or not (0)',
    labelNames: ['replica'] as const,
    registers: [registry],
  });
  const lag = new Gauge({
    name: 'leadwire_db_replica_lag_seconds',
    help: "A read replica's replay lag at its last probe: 0 when it had replayed all the primary had flushed; absent while unknown",
    labelNames: ['replica'] as const,
    registers: [registry],
  });
  for (const s of deps.replicas.statuses()) {
    up.set({ replica: s.name }, s.up ? 1 : 0);
    if (s.lagMs !== null) lag.set({ replica: s.name }, s.lagMs / 1000);
  }
}
