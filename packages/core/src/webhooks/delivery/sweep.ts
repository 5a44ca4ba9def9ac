import { qb, sql, statement, type Db } from '@leadwire/db';
import { z } from 'zod';
import { type Jobs, jobQueue } from '../../jobs/queue.ts';
import { QUEUE_LEASE_MS, RECEIVER_TIMEOUT_MS } from './policy.ts';

export const DELIVER_QUEUE = 'webhook.deliver';

/** Attempts handed to the queue per round. */
export const SWEEP_BATCH = 500;

/**
 * Worker keys whose session-level advisory lock (worker-lock.ts) is held in this database right now, and whether a
 * missing lock may be read as a dead worker. Right after PostgreSQL (re)started every lock is missing, including
 * those of live workers still finishing an attempt (a send lasts at most the receiver time-out); until that long has
 * passed, such attempts wait for their lease instead. That check compares two readings of the server's own clock
 * (its start and its now), not business time, so it is the one place that reads `now()` in SQL.
 */
const held = (settleS: number) =>
  sql<{ keys: number[]; settled: boolean }>`(
  select coalesce(array_agg((l.classid::bigint << 32) | l.objid::bigint), '{}') as keys,
    pg_postmaster_start_time() < now() - make_interval(secs => ${settleS}) as settled
  from pg_locks l
  where l.locktype = 'advisory' and l.granted and l.objsubid = 1
    and l.database = (select oid from pg_database where datname = current_database())
)`;

const PENDING = sql.lit('pending' as const);
const IN_FLIGHT = sql.lit('in_flight' as const);

/**
 * Claims attempts to hand out: pending ones that are due, in-flight ones whose lease ended (queued too long, or held
 * by a worker that lost track of them), and in-flight ones whose worker is gone. Each gets a new lease token, so any
 * older job for it is dropped as stale, and a new queue lease. The states are literals, not parameters, so the partial
 * index webhook_deliveries_due_idx serves `due` under a generic plan too.
 */
const CLAIM = statement<{ settleS: number; now: Date; batch: number; leaseUntil: Date }>()((p) =>
  qb
    .with(
      (cte) => cte('held').materialized(),
      () => held(p.settleS),
    )
    .with('due', (db) =>
      db
        .selectFrom('webhook_deliveries as d')
        .select('d.id')
        .where('d.state', 'in', [PENDING, IN_FLIGHT])
        .where('d.next_attempt_at', '<=', p.now)
        .orderBy('d.next_attempt_at')
        .limit(p.batch)
        .forUpdate('d')
        .skipLocked(),
    )
    .with('orphaned', (db) =>
      db
        .selectFrom(['webhook_deliveries as d', 'held as h'])
        .select('d.id')
        .where('d.state', '=', IN_FLIGHT)
        .where('d.worker_key', 'is not', null)
        .where((eb) => eb.ref('h.settled'))
        .where((eb) => eb.not(eb('d.worker_key', '=', eb.fn.any('h.keys'))))
        .limit(p.batch)
        .forUpdate('d')
        .skipLocked(),
    )
    .updateTable('webhook_deliveries as d')
    .set({
      state: IN_FLIGHT,
      lease_token: sql<string>`gen_random_uuid()`,
      worker_key: null,
      next_attempt_at: p.leaseUntil,
      updated_at: p.now,
    })
    .where('d.id', 'in', (eb) => eb.selectFrom('due').select('due.id').union(eb.selectFrom('orphaned').select('orphaned.id')))
    .returning(['d.id', 'd.lease_token']),
);

/**
 * When the earliest attempt, pending or in flight, comes due (its retry, or the end of its lease): the pump sleeps
 * until then instead of polling. The state literals let the partial index webhook_deliveries_due_idx answer it.
 */
const EARLIEST_DUE = statement<Record<never, never>>()(() =>
  qb
    .selectFrom('webhook_deliveries as d')
    .select((eb) => eb.fn.min('d.next_attempt_at').as('due'))
    .where('d.state', 'in', [PENDING, IN_FLIGHT]),
);

/** One attempt as a job names it: the delivery and the lease token the sweep gave it. */
export interface AttemptRef {
  deliveryId: string;
  leaseToken: string;
}

export interface DeliverJob {
  attempts: AttemptRef[];
}

/**
 * Attempts per `webhook.deliver` job. A queue job costs about as much as the attempt itself (insert, fetch, complete);
 * bundling a sweep's attempts keeps that cost off each one, while jobs stay small enough to spread over processes.
 * Each attempt keeps its own lease token, so bundling changes nothing about who may send it.
 */
export const ATTEMPTS_PER_JOB = 25;

const AttemptRefPayload = z.object({ deliveryId: z.uuid(), leaseToken: z.uuid() });
export const DeliverJobPayload = z.object({ attempts: z.array(AttemptRefPayload).min(1).max(ATTEMPTS_PER_JOB) });
/** Sent by the sweep, handled by pump.ts's deliverJob. */
export const deliverQueue = jobQueue(DELIVER_QUEUE, DeliverJobPayload);

/**
 * One sweep round, in one transaction: the claimed attempts and their jobs commit together, so an attempt is never
 * marked in flight without a job, nor a job queued for an attempt that rolled back. Returns how many were claimed.
 */
export async function sweepDeliveries(db: Db, jobs: Jobs, now: Date, batch = SWEEP_BATCH): Promise<number> {
  return (await sweepAndPlan(db, jobs, now, batch)).claimed;
}

/**
 * The same round, also reading (after its claim, in the same transaction: a round trip, not a commit of its own) when
 * the earliest attempt comes due, for the pump to sleep until then.
 */
export async function sweepAndPlan(db: Db, jobs: Jobs, now: Date, batch = SWEEP_BATCH): Promise<{ claimed: number; due: Date | null }> {
  return db.transaction(async (tx) => {
    const claimed = await claim(tx, jobs, now, batch);
    const [row] = await tx.run(EARLIEST_DUE, {});
    return { claimed, due: row?.due ? new Date(row.due) : null };
  });
}

async function claim(tx: Db, jobs: Jobs, now: Date, batch: number): Promise<number> {
  const claimed = await tx.run(CLAIM, {
    settleS: Math.ceil(RECEIVER_TIMEOUT_MS / 1000) + 5,
    now,
    batch,
    leaseUntil: new Date(now.getTime() + QUEUE_LEASE_MS),
  });
  if (claimed.length === 0) return 0;
  const bundles: DeliverJob[] = [];
  for (let i = 0; i < claimed.length; i += ATTEMPTS_PER_JOB) {
    bundles.push({ attempts: claimed.slice(i, i + ATTEMPTS_PER_JOB).map((c) => ({ deliveryId: c.id, leaseToken: c.lease_token! })) });
  }
  await deliverQueue.sendMany(jobs, tx, bundles);
  return claimed.length;
}
