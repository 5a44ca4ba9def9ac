import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Jobs } from '../../jobs/queue.ts';
import type { Random } from '../../random.ts';
import type { SendResult } from '../transport/send.ts';
import { queueDisabledMail } from './disabled-mail.ts';
import { DISABLE_AFTER_FAILURES, MAX_ATTEMPTS, nextAttemptAt, RESPONSE_BODY_CHARS, SKIP_DISABLED } from './policy.ts';

/** The attempt a worker took (deliver.ts), as recorded. */
export interface TakenAttempt {
  id: string;
  organization_id: string;
  endpoint_id: string;
  event: string;
  attempts: number;
  manual: boolean;
  /** A timestamp as the pool returns it (text); read through `new Date()`. */
  first_attempt_at: Date | string;
  lease_token: string;
  kind: 'endpoint' | 'rest_hook';
  url: string;
}

/** Only the holder of the current lease writes the outcome: a reclaimed attempt's late answer changes nothing. */
const FINISH = `
update webhook_deliveries set state = ?, attempts = attempts + ?, next_attempt_at = ?, skip_reason = ?, worker_key = null, updated_at = ?
where id = ? and lease_token = ? and state = 'in_flight'
returning id`;

/** FINISH for a round of attempts (coalesce.ts): one row per attempt, each guarded by its own lease token. */
const FINISH_MANY = `
update webhook_deliveries d
set state = v.state, attempts = d.attempts + 1, next_attempt_at = v.next_attempt_at, skip_reason = null, worker_key = null, updated_at = ?
from jsonb_to_recordset(?::jsonb) as v(id uuid, lease_token uuid, state text, next_attempt_at timestamptz)
where d.id = v.id and d.lease_token = v.lease_token and d.state = 'in_flight'
returning d.id`;

/**
 * The log line; written even for a reclaimed attempt (it did reach the receiver), unless the delivery is gone. An
 * attempt id already logged is a retry of a round whose commit was lost with the connection: it stays as logged.
 */
const LOG = `
insert into webhook_attempts (id, organization_id, endpoint_id, delivery_id, event, attempt, outcome, status_code, response_body, duration_ms, error, next_attempt_at, created_at)
select ?, d.organization_id, d.endpoint_id, d.id, d.event, ?, ?, ?, ?, ?, ?, ?, ? from webhook_deliveries d where d.id = ?`;

const LOG_MANY = `
insert into webhook_attempts (id, organization_id, endpoint_id, delivery_id, event, attempt, outcome, status_code, response_body, duration_ms, error, next_attempt_at, created_at)
select v.id, d.organization_id, d.endpoint_id, d.id, d.event, v.attempt, v.outcome, v.status_code, v.response_body, v.duration_ms, v.error, v.next_attempt_at, v.created_at
from jsonb_to_recordset(?::jsonb) as v(id uuid, delivery_id uuid, attempt int, outcome text, status_code int, response_body text, duration_ms int,
  error text, next_attempt_at timestamptz, created_at timestamptz)
join webhook_deliveries d on d.id = v.delivery_id
on conflict (id) do nothing`;

/** Only endpoints with failures are written (and locked): a healthy endpoint's row is left alone. */
const RESET_FAILURES = `update webhook_endpoints set failure_count = 0 where id = any(?::uuid[]) and failure_count <> 0`;
const COUNT_FAILURE = `update webhook_endpoints set failure_count = failure_count + 1 where id = ? returning failure_count`;
/** Only an enabled endpoint is disabled (and mailed about): concurrent attempts cannot disable it twice. */
const DISABLE = `update webhook_endpoints set enabled = false, disabled_reason = ?, updated_at = ? where id = ? and enabled returning id`;
/** REST-hooks convention: a receiver answering 410 Gone has unsubscribed (its deliveries and log go with it). */
const UNSUBSCRIBE = `delete from webhook_endpoints where id = ? and kind = 'rest_hook'`;

export interface RecordDeps {
  jobs: Jobs;
  baseUrl: string;
  /** Spreads each retry (policy.ts, RETRY_JITTER). */
  random: Random;
}

async function disable(tx: Db, deps: RecordDeps, a: TakenAttempt, reason: string, now: Date): Promise<void> {
  const [row] = await tx.execute<{ id: string }[]>(DISABLE, [reason, now, a.endpoint_id]);
  if (row) await queueDisabledMail(tx, deps.jobs, deps.baseUrl, { id: a.endpoint_id, orgId: a.organization_id, url: a.url, reason });
}

const describe = (r: SendResult) => (r.statusCode !== null ? `HTTP ${r.statusCode}` : (r.error ?? 'no answer'));

/** A taken attempt whose endpoint was disabled meanwhile: recorded as skipped, never sent. */
export async function recordSkipped(db: Db, a: TakenAttempt, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    const [own] = await tx.execute<{ id: string }[]>(FINISH, ['skipped', 0, null, SKIP_DISABLED, now, a.id, a.lease_token]);
    if (own) await tx.execute(LOG, [randomUUID(), 0, 'skipped', null, null, null, SKIP_DISABLED, null, now, a.id]);
  });
}

/** One attempt's outcome, as the worker hands it to be recorded. */
export interface AttemptOutcome {
  a: TakenAttempt;
  attemptId: string;
  startedAt: Date;
  result: SendResult;
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
  const state = o.result.outcome === 'succeeded' ? 'succeeded' : retryAt ? 'pending' : 'failed';
  return { ...o, attempt, gone, retryAt, state };
}

/**
 * Writes a round of attempts' outcomes in one transaction: the log lines, each delivery's new state (done, failed, or
 * pending until its next slot), and the endpoints' consequences (failure count, disabling with a mail, 410
 * unsubscribing) for the attempts whose lease was still theirs. Successes reset failure counts first, so a failure in
 * the same round still counts.
 */
export async function recordAttempts(db: Db, deps: RecordDeps, outcomes: readonly AttemptOutcome[], now: Date): Promise<void> {
  const planned = outcomes.map((o) => plan(o, deps.random));
  await db.transaction(async (tx) => {
    const finished = await tx.execute<{ id: string }[]>(FINISH_MANY, [
      now,
      JSON.stringify(planned.map((p) => ({ id: p.a.id, lease_token: p.a.lease_token, state: p.state, next_attempt_at: p.retryAt }))),
    ]);
    await tx.execute(LOG_MANY, [
      JSON.stringify(
        planned.map((p) => ({
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
        })),
      ),
    ]);
    const own = new Set(finished.map((f) => f.id));
    // Manual replays and test pings say nothing about the endpoint's health.
    const mine = planned.filter((p) => own.has(p.a.id));
    const healthy = [...new Set(mine.filter((p) => p.result.outcome === 'succeeded' && !p.a.manual).map((p) => p.a.endpoint_id))];
    if (healthy.length) await tx.execute(RESET_FAILURES, [healthy.sort()]);
    for (const p of mine) {
      if (p.gone) await tx.execute(UNSUBSCRIBE, [p.a.endpoint_id]);
      else if (p.result.outcome === 'blocked') await disable(tx, deps, p.a, p.result.error ?? 'The URL points at a private or internal address', now);
      else if (p.result.outcome === 'failed' && !p.a.manual) {
        const [count] = await tx.execute<{ failure_count: number }[]>(COUNT_FAILURE, [p.a.endpoint_id]);
        if ((count?.failure_count ?? 0) >= DISABLE_AFTER_FAILURES) {
          await disable(tx, deps, p.a, `${DISABLE_AFTER_FAILURES} deliveries failed in a row; the last one: ${describe(p.result)}`, now);
        }
      }
    }
  });
}
