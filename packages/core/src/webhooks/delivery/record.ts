import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type Db, type DB, type Selectable } from '@leadwire/db';
import type { Jobs } from '../../jobs/queue.ts';
import type { Random } from '../../random.ts';
import type { SendResult } from '../transport/send.ts';
import { emitEvents, type PendingEvent } from '../../events/outbox.ts';
import { queueDisabledMail } from './disabled-mail.ts';
import { deliveryFailed, endpointDisabled } from './operational.ts';
import { DISABLE_AFTER_FAILURES, MAX_ATTEMPTS, nextAttemptAt, RESPONSE_BODY_CHARS, SKIP_DISABLED } from './policy.ts';
import { countAttempt } from '../../metrics/registry.ts';

type Delivery = Selectable<DB['webhook_deliveries']>;

/**
 * The attempt a worker took (deliver.ts), as recorded: its delivery and endpoint columns. A timestamp may come back
 * from the pool as text: `first_attempt_at` is read through `new Date()`.
 */
export type TakenAttempt = Pick<Delivery, 'id' | 'organization_id' | 'endpoint_id' | 'event_id' | 'event' | 'attempts' | 'manual'> &
  Pick<Selectable<DB['webhook_endpoints']>, 'kind' | 'url'> & { first_attempt_at: Date | string; lease_token: string };

const IN_FLIGHT = sql.lit('in_flight' as const);

/** Only the holder of the current lease writes the outcome: a reclaimed attempt's late answer changes nothing. */
const FINISH_SKIPPED = statement<{ reason: string; now: Date; id: string; leaseToken: string }>()((p) =>
  qb
    .updateTable('webhook_deliveries')
    .set({ state: sql.lit('skipped'), next_attempt_at: null, skip_reason: p.reason, worker_key: null, updated_at: p.now })
    .where('id', '=', p.id)
    .where('lease_token', '=', p.leaseToken)
    .where('state', '=', IN_FLIGHT)
    .returning('id'),
);

/** An outcome of FINISH_MANY's JSON, in the column names it sets. */
type Finished = Pick<Delivery, 'id' | 'state' | 'next_attempt_at'> & { lease_token: string };

/** FINISH for a round of attempts (coalesce.ts): one row per attempt, each guarded by its own lease token. */
const FINISH_MANY = statement<{ now: Date; outcomes: string }>()((p) =>
  qb
    .updateTable('webhook_deliveries as d')
    .from(
      sql<Finished>`jsonb_to_recordset(${p.outcomes}::jsonb)`.as<'v'>(
        sql`v(id uuid, lease_token uuid, state text, next_attempt_at timestamptz)`,
      ),
    )
    .set((eb) => ({
      state: eb.ref('v.state'),
      attempts: eb(eb.ref('d.attempts'), '+', sql.lit(1)),
      next_attempt_at: eb.ref('v.next_attempt_at'),
      skip_reason: null,
      worker_key: null,
      updated_at: p.now,
    }))
    .whereRef('d.id', '=', 'v.id')
    .whereRef('d.lease_token', '=', 'v.lease_token')
    .where('d.state', '=', IN_FLIGHT)
    .returning('d.id'),
);

/** A log line's columns, in the order both inserts below select them. */
const ATTEMPT_COLUMNS = [
  'id',
  'organization_id',
  'endpoint_id',
  'delivery_id',
  'event',
  'attempt',
  'outcome',
  'status_code',
  'response_body',
  'duration_ms',
  'error',
  'next_attempt_at',
  'created_at',
  'url',
  'request_headers',
  'response_headers',
] as const;

/**
 * The log line; written even for a reclaimed attempt (it did reach the receiver), unless the delivery is gone. An
 * attempt id already logged is a retry of a round whose commit was lost with the connection: it stays as logged.
 */
const LOG_SKIPPED = statement<{ id: string; error: string; now: Date; deliveryId: string }>()((p) =>
  qb
    .insertInto('webhook_attempts')
    .columns(ATTEMPT_COLUMNS)
    .expression(
      qb
        .selectFrom('webhook_deliveries as d')
        .select((eb) => [
          eb.val(p.id).as('id'),
          'd.organization_id',
          'd.endpoint_id',
          'd.id as delivery_id',
          'd.event',
          sql.lit(0).as('attempt'),
          sql.lit('skipped').as('outcome'),
          sql.lit(null).as('status_code'),
          sql.lit(null).as('response_body'),
          sql.lit(null).as('duration_ms'),
          eb.val(p.error).as('error'),
          sql.lit(null).as('next_attempt_at'),
          eb.val(p.now).as('created_at'),
          sql.lit(null).as('url'),
          sql.lit(null).as('request_headers'),
          sql.lit(null).as('response_headers'),
        ])
        .where('d.id', '=', p.deliveryId),
    ),
);

/** A line of LOG_MANY's JSON, in the column names it is inserted under. */
type Logged = Pick<
  Selectable<DB['webhook_attempts']>,
  | 'id'
  | 'delivery_id'
  | 'attempt'
  | 'outcome'
  | 'status_code'
  | 'response_body'
  | 'duration_ms'
  | 'error'
  | 'next_attempt_at'
  | 'created_at'
  | 'url'
  | 'request_headers'
  | 'response_headers'
>;

const LOG_MANY = statement<{ lines: string }>()((p) =>
  qb
    .insertInto('webhook_attempts')
    .columns(ATTEMPT_COLUMNS)
    .expression(
      qb
        .selectFrom(
          sql<Logged>`jsonb_to_recordset(${p.lines}::jsonb)`.as<'v'>(
            sql`v(id uuid, delivery_id uuid, attempt int, outcome text, status_code int, response_body text, duration_ms int,
  error text, next_attempt_at timestamptz, created_at timestamptz, url text, request_headers jsonb, response_headers jsonb)`,
          ),
        )
        .innerJoin('webhook_deliveries as d', 'd.id', 'v.delivery_id')
        .select([
          'v.id',
          'd.organization_id',
          'd.endpoint_id',
          'd.id as delivery_id',
          'd.event',
          'v.attempt',
          'v.outcome',
          'v.status_code',
          'v.response_body',
          'v.duration_ms',
          'v.error',
          'v.next_attempt_at',
          'v.created_at',
          'v.url',
          'v.request_headers',
          'v.response_headers',
        ]),
    )
    .onConflict((oc) => oc.column('id').doNothing()),
);

/** Only endpoints with failures are written (and locked): a healthy endpoint's row is left alone. */
const RESET_FAILURES = statement<{ ids: string[] }>()((p) =>
  qb
    .updateTable('webhook_endpoints')
    .set({ failure_count: sql.lit(0) })
    .where('id', '=', (eb) => eb.fn.any(sql<string[]>`${p.ids}::uuid[]`))
    .where('failure_count', '<>', sql.lit(0)),
);
const COUNT_FAILURE = statement<{ id: string }>()((p) =>
  qb
    .updateTable('webhook_endpoints')
    .set((eb) => ({ failure_count: eb(eb.ref('failure_count'), '+', sql.lit(1)) }))
    .where('id', '=', p.id)
    .returning('failure_count'),
);
/** Only an enabled endpoint is disabled (and mailed about): concurrent attempts cannot disable it twice. */
const DISABLE = statement<{ reason: string; now: Date; id: string }>()((p) =>
  qb
    .updateTable('webhook_endpoints')
    .set({ enabled: sql.lit(false), disabled_reason: p.reason, updated_at: p.now })
    .where('id', '=', p.id)
    .where((eb) => eb.ref('enabled'))
    .returning(['id', 'failure_count']),
);
/** REST-hooks convention: a receiver answering 410 Gone has unsubscribed (its deliveries and log go with it). */
const UNSUBSCRIBE = statement<{ id: string }>()((p) =>
  qb.deleteFrom('webhook_endpoints').where('id', '=', p.id).where('kind', '=', sql.lit('rest_hook')),
);

export interface RecordDeps {
  jobs: Jobs;
  /** The console's origin and the application API's root, for the disabled endpoint's mail. */
  appUrl: string;
  baseUrl: string;
  /** Spreads each retry (policy.ts, RETRY_JITTER). */
  random: Random;
}

/** Disables the endpoint once, with the owners' mail and `webhook.endpoint_disabled` (into `events`). */
async function disable(tx: Db, deps: RecordDeps, a: TakenAttempt, reason: string, now: Date, events: PendingEvent[]): Promise<void> {
  const [row] = await tx.run(DISABLE, { reason, now, id: a.endpoint_id });
  if (!row) return;
  const endpoint = { id: a.endpoint_id, orgId: a.organization_id, url: a.url };
  await queueDisabledMail(tx, deps.jobs, deps, { ...endpoint, reason });
  events.push(endpointDisabled(endpoint, reason, row.failure_count, now));
}

const describe = (r: SendResult) => (r.statusCode !== null ? `HTTP ${r.statusCode}` : (r.error ?? 'no answer'));

/** A taken attempt whose endpoint was disabled meanwhile: recorded as skipped, never sent. */
export async function recordSkipped(db: Db, a: TakenAttempt, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    const [own] = await tx.run(FINISH_SKIPPED, { reason: SKIP_DISABLED, now, id: a.id, leaseToken: a.lease_token });
    if (own) await tx.run(LOG_SKIPPED, { id: randomUUID(), error: SKIP_DISABLED, now, deliveryId: a.id });
  });
  countAttempt('skipped', 0, MAX_ATTEMPTS);
}

/** One attempt's outcome, as the worker hands it to be recorded. */
export interface AttemptOutcome {
  a: TakenAttempt;
  attemptId: string;
  startedAt: Date;
  result: SendResult;
  /** The signed headers prepared for the attempt (the result's own, with Host and Content-Length, when it was sent). */
  headers?: Record<string, string>;
}

/** jsonb cannot hold NUL; the log shows it as U+FFFD (send.ts already does so for the body it keeps). */
const text = (s: string | null) => (s === null ? null : s.replaceAll('\0', '\uFFFD'));

/** What an outcome does to its delivery: the next attempt's time (a failure with attempts left) and the new state. */
function plan(o: AttemptOutcome, random: Random) {
  const attempt = o.a.attempts + 1;
  const gone = o.a.kind === 'rest_hook' && o.result.statusCode === 410;
  const retryAt =
    o.result.outcome === 'failed' && !o.a.manual && !gone && attempt < MAX_ATTEMPTS
      ? nextAttemptAt(new Date(o.a.first_attempt_at), attempt, random.next())
      : null;
  const state: Finished['state'] = o.result.outcome === 'succeeded' ? 'succeeded' : retryAt ? 'pending' : 'failed';
  return { ...o, attempt, gone, retryAt, state };
}

/** `webhook.delivery_failed` for a delivery whose last attempt failed (none for operational events' deliveries). */
function exhausted(p: ReturnType<typeof plan>, now: Date): PendingEvent[] {
  const e = deliveryFailed(
    {
      endpoint: { id: p.a.endpoint_id, orgId: p.a.organization_id, url: p.a.url },
      deliveryId: p.a.id,
      eventId: p.a.event_id,
      eventName: p.a.event,
      attempts: p.attempt,
      manual: p.a.manual,
      lastStatusCode: p.result.statusCode,
      lastError: text(p.result.error),
    },
    now,
  );
  return e ? [e] : [];
}

/**
 * Writes a round of attempts' outcomes in one transaction: the log lines, each delivery's new state (done, failed, or
 * pending until its next slot), and the endpoints' consequences (failure count, disabling with a mail, 410
 * unsubscribing) with their operational events for the attempts whose lease was still theirs. Successes reset failure counts first, so a failure in
 * the same round still counts.
 */
export async function recordAttempts(db: Db, deps: RecordDeps, outcomes: readonly AttemptOutcome[], now: Date): Promise<Date | null> {
  const planned = outcomes.map((o) => plan(o, deps.random));
  await db.transaction(async (tx) => {
    const finished = await tx.run(FINISH_MANY, {
      now,
      outcomes: JSON.stringify(
        planned.map((p): Finished => ({ id: p.a.id, lease_token: p.a.lease_token, state: p.state, next_attempt_at: p.retryAt })),
      ),
    });
    await tx.run(LOG_MANY, {
      lines: JSON.stringify(
        planned.map(
          (p): Logged => ({
            id: p.attemptId,
            delivery_id: p.a.id,
            attempt: p.attempt,
            outcome: p.result.outcome,
            status_code: p.result.statusCode,
            response_body: text(p.result.responseBody?.slice(0, RESPONSE_BODY_CHARS) ?? null),
            duration_ms: Math.round(p.result.durationMs),
            error: text(p.result.error),
            next_attempt_at: p.retryAt,
            created_at: p.startedAt,
            url: p.a.url,
            // What a request would have carried when none was made (a refused address): the log shows what was signed.
            request_headers: p.result.requestHeaders ?? p.headers ?? null,
            response_headers: p.result.responseHeaders,
          }),
        ),
      ),
    });
    const own = new Set(finished.map((f) => f.id));
    // Manual replays and test pings say nothing about the endpoint's health.
    const mine = planned.filter((p) => own.has(p.a.id));
    const healthy = [...new Set(mine.filter((p) => p.result.outcome === 'succeeded' && !p.a.manual).map((p) => p.a.endpoint_id))];
    if (healthy.length) await tx.run(RESET_FAILURES, { ids: healthy.sort() });
    const events: PendingEvent[] = [];
    for (const p of mine) {
      if (p.gone) await tx.run(UNSUBSCRIBE, { id: p.a.endpoint_id });
      else if (p.result.outcome === 'blocked')
        await disable(tx, deps, p.a, p.result.error ?? 'The URL points at a private or internal address', now, events);
      else if (p.result.outcome === 'failed' && !p.a.manual) {
        if (p.state === 'failed') events.push(...exhausted(p, now));
        const [count] = await tx.run(COUNT_FAILURE, { id: p.a.endpoint_id });
        if ((count?.failure_count ?? 0) >= DISABLE_AFTER_FAILURES) {
          const reason = `${DISABLE_AFTER_FAILURES} deliveries failed in a row; the last one: ${describe(p.result)}`;
          await disable(tx, deps, p.a, reason, now, events);
        }
      }
    }
    await emitEvents(tx, events);
  });
  // Counted once committed, as logged: a round rolled back is retried and counted then.
  for (const p of planned) countAttempt(p.result.outcome, p.attempt, MAX_ATTEMPTS);
  // The earliest retry scheduled: the pump of this process sleeps until then rather than polling for it.
  const retries = planned.flatMap((p) => (p.retryAt ? [p.retryAt.getTime()] : []));
  return retries.length ? new Date(Math.min(...retries)) : null;
}
