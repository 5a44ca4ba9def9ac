import { randomUUID } from 'node:crypto';
import { qb, sql, statement } from '@leadwire/db';
import type { Clock } from '../../clock.ts';
import type { Deps } from '../../context.ts';
import { signDelivery } from '../transport/signing.ts';
import { sendWebhook } from '../transport/send.ts';
import { tracedAttempt } from './attempt-trace.ts';
import { Coalescer } from './coalesce.ts';
import { attemptLabel, commitToAttempt } from '../../metrics/registry.ts';
import { ATTEMPT_LEASE_MS, MAX_ATTEMPTS, RECEIVER_TIMEOUT_MS } from './policy.ts';
import { type AttemptOutcome, recordAttempts, recordSkipped } from './record.ts';
import type { AttemptRef } from './sweep.ts';
import type { InFlight } from './in-flight.ts';
import type { WorkerLock } from './worker-lock.ts';

/**
 * Takes the attempts some jobs name, each only if its job is still the current one: same lease token, still in flight,
 * not yet taken. Stamps this worker's key, but only while the key's lock is held in PostgreSQL (checked once, in the
 * same statement), so a sweeper never sees an attempt of a live worker as orphaned.
 */
const TAKE = statement<{ key: string; leaseUntil: Date; now: Date; ids: string[]; tokens: string[] }>()((p) =>
  qb
    .updateTable('webhook_deliveries as d')
    .set((eb) => ({
      // The key is a 63-bit integer: it travels as text, and the column keeps it exactly.
      worker_key: sql<number>`${p.key}::bigint`,
      next_attempt_at: p.leaseUntil,
      first_attempt_at: eb.fn.coalesce('d.first_attempt_at', eb.val(p.now)),
      updated_at: p.now,
    }))
    .from([
      'webhook_endpoints as w',
      sql<{ id: string; lease_token: string }>`unnest(${p.ids}::uuid[], ${p.tokens}::uuid[])`.as<'j'>(sql`j(id, lease_token)`),
    ])
    .whereRef('d.id', '=', 'j.id')
    .whereRef('d.lease_token', '=', 'j.lease_token')
    .where('d.state', '=', sql.lit('in_flight'))
    .where('d.worker_key', 'is', null)
    .whereRef('w.id', '=', 'd.endpoint_id')
    // pg_locks is PostgreSQL's own view, not one of our tables: the one raw condition, as in sweep.ts.
    .where(
      sql<boolean>`exists (
    select 1 from pg_locks l
    where l.locktype = 'advisory' and l.granted and l.objsubid = 1 and ((l.classid::bigint << 32) | l.objid::bigint) = ${p.key}::bigint
      and l.database = (select oid from pg_database where datname = current_database()))`,
    )
    .returning((eb) => [
      'd.id',
      eb.fn.coalesce('d.message_id', 'd.id').as('message_id'),
      'd.organization_id',
      'd.endpoint_id',
      'd.event_id',
      'd.event',
      'd.body',
      'd.attempts',
      'd.manual',
      'd.first_attempt_at',
      'd.lease_token',
      'w.kind',
      'w.url',
      'w.enabled',
      'w.secret',
      'w.previous_secret',
      'w.previous_secret_expires_at',
      // The event's time (commit-to-attempt latency) and the request that wrote it (the attempt's log line): looked up
      // by the event's primary key in this same statement, no round trip of their own; null for a ping, or an event
      // gone with its organization.
      (eb) => eb.selectFrom('outbox_events as e').select('e.created_at').whereRef('e.id', '=', 'd.event_id').as('event_at'),
      (eb) => eb.selectFrom('outbox_events as e').select('e.request_id').whereRef('e.id', '=', 'd.event_id').as('request_id'),
    ])
    // This statement set first_attempt_at, and matched lease_token to the job's: neither comes back null.
    .$narrowType<{ first_attempt_at: Date; lease_token: string }>(),
);

type TakenRow = NonNullable<(typeof TAKE)['row']>;

/** Attempts taken, and outcomes recorded, per statement: a pg-boss batch of jobs and then some. */
const ROUND_MAX = 200;

/** Recording an outcome is retried while PostgreSQL is away (a restart), within the attempt's lease (both on deps.clock). */
const RECORD_TRIES = 15;
const RECORD_RETRY_MS = 1_000;

async function persistently<T>(clock: Clock, fn: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= RECORD_TRIES) throw err;
      await clock.sleep(RECORD_RETRY_MS);
    }
  }
}

async function takeAttempts(deps: Deps, lock: WorkerLock, refs: AttemptRef[]): Promise<(TakenRow | null)[]> {
  const now = deps.clock.now();
  const rows = await deps.db.run(TAKE, {
    key: lock.key,
    leaseUntil: new Date(now.getTime() + ATTEMPT_LEASE_MS),
    now,
    ids: refs.map((j) => j.deliveryId),
    tokens: refs.map((j) => j.leaseToken),
  });
  // One row per taken attempt; a second job naming the same attempt and token in this round gets nothing, so two
  // copies of one job can never both send.
  const taken = new Map(rows.map((r) => [`${r.id}/${r.lease_token}`, r]));
  return refs.map((j) => {
    const key = `${j.deliveryId}/${j.leaseToken}`;
    const row = taken.get(key) ?? null;
    taken.delete(key);
    return row;
  });
}

/** The statements a worker process shares among its attempts (see coalesce.ts). */
export interface AttemptRounds {
  take: Coalescer<AttemptRef, TakenRow | null>;
  record: Coalescer<AttemptOutcome, undefined>;
}

/** `retryBy`: told the earliest retry a round of outcomes scheduled, once it committed (the pump sleeps until then). */
export function attemptRounds(deps: Deps, lock: WorkerLock, retryBy: (at: Date) => void = () => {}): AttemptRounds {
  const recordDeps = { jobs: deps.jobs, appUrl: deps.config.APP_URL, baseUrl: deps.config.BASE_URL, random: deps.random };
  return {
    take: new Coalescer((refs) => takeAttempts(deps, lock, refs), ROUND_MAX),
    record: new Coalescer(async (outcomes) => {
      const retry = await persistently(deps.clock, () => recordAttempts(deps.db, recordDeps, outcomes, deps.clock.now()));
      if (retry) retryBy(retry);
      return outcomes.map(() => undefined);
    }, ROUND_MAX),
  };
}

/**
 * Attempts one process sends at once. Each holds a socket (kept alive for the next) for at most the receiver time-out;
 * the cap keeps a backlog from opening a connection per attempt.
 */
export const MAX_IN_FLIGHT = 200;

/**
 * Takes one attempt a `webhook.deliver` job names and starts it. A stale one (handed out again, finished, or deleted
 * with its endpoint) is dropped. The job ends once its attempts are taken, so pg-boss fetches
 * the next batch while this one is still being sent: from the take on, the attempt is this worker's (its key, its
 * lease), and a worker that dies with it loses it to the sweeper, exactly as before.
 */
export async function deliverOne(
  deps: Deps,
  worker: { lock: WorkerLock; active: InFlight; attempts: AttemptRounds },
  ref: AttemptRef,
): Promise<void> {
  // Without the lock our key would look dead to every sweeper: leave the job; the attempt is queued again after its lease.
  if (!(await worker.lock.ready())) throw new Error('webhook worker lock not held; attempt left for the sweeper');
  await worker.active.start(
    () => worker.attempts.take.push(ref),
    (a) =>
      attempt(deps, worker.attempts, a).catch((err: unknown) => {
        // Recording failed for the whole lease (PostgreSQL away): the attempt stays in flight and is queued again.
        deps.log.error({ err, deliveryId: a.id }, 'webhook attempt not recorded; it is retried after its lease');
      }),
  );
}

async function attempt(deps: Deps, rounds: AttemptRounds, a: TakenRow): Promise<void> {
  // A manual replay or test ping still goes to a disabled endpoint: that is how an owner checks a fixed receiver.
  if (!a.enabled && !a.manual) return persistently(deps.clock, () => recordSkipped(deps.db, a, deps.clock.now()));
  const attemptId = randomUUID();
  const startedAt = deps.clock.now();
  const number = a.attempts + 1;
  // Replays and test pings are sent when someone asks, long after the event: their wait says nothing of the engine.
  if (!a.manual && a.event_at !== null) {
    const waited = (startedAt.getTime() - new Date(a.event_at).getTime()) / 1000;
    commitToAttempt.observe({ attempt: attemptLabel(number, MAX_ATTEMPTS) }, Math.max(0, waited));
  }
  const inGrace = a.previous_secret_expires_at !== null && new Date(a.previous_secret_expires_at).getTime() > startedAt.getTime();
  const headers = signDelivery({
    body: a.body,
    secret: a.secret,
    previousSecret: inGrace ? a.previous_secret : null,
    messageId: a.message_id,
    attemptId,
    event: a.event,
    at: startedAt,
  });
  const info = () => ({
    deliveryId: a.id,
    eventId: a.event_id,
    event: a.event,
    endpointId: a.endpoint_id,
    organizationId: a.organization_id,
    attempt: a.attempts + 1,
    url: a.url,
  });
  const result = await tracedAttempt(info, () =>
    sendWebhook(
      { url: a.url, body: a.body, headers },
      { resolver: deps.resolver, allowLoopback: deps.config.WEBHOOKS_UNSAFE_ALLOW_LOOPBACK, timeoutMs: RECEIVER_TIMEOUT_MS },
    ),
  );
  await rounds.record.push({ a, attemptId, startedAt, result, headers });
  // reqId: the request that wrote the event, so a partner's complaint about a request leads to its deliveries. A failed
  // attempt is worth an operator's attention; a success is detail (thousands a second at load).
  const line = {
    reqId: a.request_id ?? undefined,
    deliveryId: a.id,
    eventId: a.event_id,
    event: a.event,
    attempt: number,
    outcome: result.outcome,
    statusCode: result.statusCode,
    ms: result.durationMs,
  };
  if (result.outcome === 'succeeded') deps.log.debug(line, 'webhook attempt');
  else deps.log.info(line, 'webhook attempt');
}
