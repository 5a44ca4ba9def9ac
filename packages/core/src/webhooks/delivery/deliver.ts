import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Deps } from '../../context.ts';
import { signDelivery } from '../transport/signing.ts';
import { sendWebhook } from '../transport/send.ts';
import { ATTEMPT_LEASE_MS, RECEIVER_TIMEOUT_MS } from './policy.ts';
import { recordAttempt, recordSkipped, type TakenAttempt } from './record.ts';
import type { DeliverJob } from './sweep.ts';
import type { WorkerLock } from './worker-lock.ts';

/**
 * Takes the attempt a job names, if that job is still the current one: same lease token, still in flight, not yet
 * taken. Stamps this worker's key, but only while the key's lock is held in PostgreSQL (checked in the same
 * statement), so a sweeper never sees an attempt of a live worker as orphaned.
 */
const TAKE = `
update webhook_deliveries d
set worker_key = ?::bigint, next_attempt_at = ?, first_attempt_at = coalesce(d.first_attempt_at, ?), updated_at = ?
from webhook_endpoints w
where d.id = ? and d.lease_token = ? and d.state = 'in_flight' and d.worker_key is null and w.id = d.endpoint_id
  and exists (
    select 1 from pg_locks l
    where l.locktype = 'advisory' and l.granted and l.objsubid = 1 and ((l.classid::bigint << 32) | l.objid::bigint) = ?::bigint
      and l.database = (select oid from pg_database where datname = current_database()))
returning d.id, d.organization_id, d.endpoint_id, d.event, d.body, d.attempts, d.manual, d.first_attempt_at, d.lease_token,
  w.kind, w.url, w.enabled, w.secret, w.previous_secret, w.previous_secret_expires_at`;

interface TakenRow extends TakenAttempt {
  body: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | string | null;
}

/** Recording an outcome is retried while PostgreSQL is away (a restart), within the attempt's lease. */
const RECORD_TRIES = 15;
const RECORD_RETRY_MS = 1_000;

async function persistently(fn: () => Promise<void>): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= RECORD_TRIES) throw err;
      await sleep(RECORD_RETRY_MS);
    }
  }
}

/**
 * Runs one `webhook.deliver` job: one attempt of one delivery. A stale job (its attempt was handed out again, finished,
 * or deleted with its endpoint) is dropped. `active` holds the deliveries this process is sending, so shutdown can
 * wait for them before giving up the worker lock.
 */
export async function deliverOne(deps: Deps, lock: WorkerLock, active: Set<Promise<void>>, job: DeliverJob): Promise<void> {
  // Without the lock our key would look dead to every sweeper: leave the job; the attempt is queued again after its lease.
  if (!lock.held) throw new Error('webhook worker lock not held; attempt left for the sweeper');
  const now = deps.clock.now();
  const [a] = await deps.db.execute<TakenRow[]>(TAKE, [lock.key, new Date(now.getTime() + ATTEMPT_LEASE_MS), now, now, job.deliveryId, job.leaseToken, lock.key]);
  if (!a) return;
  const work = attempt(deps, a);
  active.add(work);
  try {
    await work;
  } finally {
    active.delete(work);
  }
}

async function attempt(deps: Deps, a: TakenRow): Promise<void> {
  // A manual replay or test ping still goes to a disabled endpoint: that is how an owner checks a fixed receiver.
  if (!a.enabled && !a.manual) return persistently(() => recordSkipped(deps.db, a, deps.clock.now()));
  const attemptId = randomUUID();
  const startedAt = deps.clock.now();
  const inGrace = a.previous_secret_expires_at !== null && new Date(a.previous_secret_expires_at).getTime() > startedAt.getTime();
  const headers = signDelivery({
    body: a.body,
    secret: a.secret,
    previousSecret: inGrace ? a.previous_secret : null,
    deliveryId: a.id,
    attemptId,
    event: a.event,
    at: startedAt,
  });
  const result = await sendWebhook(
    { url: a.url, body: a.body, headers },
    { resolver: deps.resolver, allowLoopback: deps.config.WEBHOOKS_UNSAFE_ALLOW_LOOPBACK, timeoutMs: RECEIVER_TIMEOUT_MS },
  );
  await persistently(() => recordAttempt(deps.db, { jobs: deps.jobs, baseUrl: deps.config.BASE_URL }, a, attemptId, startedAt, result, deps.clock.now()));
}
