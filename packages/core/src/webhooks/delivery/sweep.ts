import type { Db } from '@leadwire/db';
import type { Jobs } from '../../jobs/queue.ts';
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
const HELD = `
held as materialized (
  select coalesce(array_agg((l.classid::bigint << 32) | l.objid::bigint), '{}') as keys,
    pg_postmaster_start_time() < now() - make_interval(secs => ?) as settled
  from pg_locks l
  where l.locktype = 'advisory' and l.granted and l.objsubid = 1
    and l.database = (select oid from pg_database where datname = current_database())
)`;

/**
 * Claims attempts to hand out: pending ones that are due, in-flight ones whose lease ended (queued too long, or held
 * by a worker that lost track of them), and in-flight ones whose worker is gone. Each gets a new lease token, so any
 * older job for it is dropped as stale, and a new queue lease.
 */
const CLAIM = `
with ${HELD},
due as (
  select d.id from webhook_deliveries d
  where d.state in ('pending', 'in_flight') and d.next_attempt_at <= ?
  order by d.next_attempt_at
  limit ?
  for update of d skip locked
),
orphaned as (
  select d.id from webhook_deliveries d, held h
  where d.state = 'in_flight' and d.worker_key is not null and h.settled and not (d.worker_key = any(h.keys))
  limit ?
  for update of d skip locked
)
update webhook_deliveries d
set state = 'in_flight', lease_token = gen_random_uuid(), worker_key = null, next_attempt_at = ?, updated_at = ?
where d.id in (select id from due union select id from orphaned)
returning d.id, d.lease_token`;

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

/**
 * One sweep round, in one transaction: the claimed attempts and their jobs commit together, so an attempt is never
 * marked in flight without a job, nor a job queued for an attempt that rolled back. Returns how many were claimed.
 */
export async function sweepDeliveries(db: Db, jobs: Jobs, now: Date, batch = SWEEP_BATCH): Promise<number> {
  return db.transaction(async (tx) => {
    const claimed = await tx.execute<{ id: string; lease_token: string }[]>(CLAIM, [
      Math.ceil(RECEIVER_TIMEOUT_MS / 1000) + 5,
      now,
      batch,
      batch,
      new Date(now.getTime() + QUEUE_LEASE_MS),
      now,
    ]);
    if (claimed.length === 0) return 0;
    const bundles: DeliverJob[] = [];
    for (let i = 0; i < claimed.length; i += ATTEMPTS_PER_JOB) {
      bundles.push({ attempts: claimed.slice(i, i + ATTEMPTS_PER_JOB).map((c) => ({ deliveryId: c.id, leaseToken: c.lease_token })) });
    }
    await jobs.sendMany(tx, DELIVER_QUEUE, bundles);
    return claimed.length;
  });
}
