import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Jobs } from '../../jobs/queue.ts';
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

/** The log line; written even for a reclaimed attempt (it did reach the receiver), unless the delivery is gone. */
const LOG = `
insert into webhook_attempts (id, organization_id, endpoint_id, delivery_id, event, attempt, outcome, status_code, response_body, duration_ms, error, next_attempt_at, created_at)
select ?, d.organization_id, d.endpoint_id, d.id, d.event, ?, ?, ?, ?, ?, ?, ?, ? from webhook_deliveries d where d.id = ?`;

const RESET_FAILURES = `update webhook_endpoints set failure_count = 0 where id = ? and failure_count <> 0`;
const COUNT_FAILURE = `update webhook_endpoints set failure_count = failure_count + 1 where id = ? returning failure_count`;
/** Only an enabled endpoint is disabled (and mailed about): concurrent attempts cannot disable it twice. */
const DISABLE = `update webhook_endpoints set enabled = false, disabled_reason = ?, updated_at = ? where id = ? and enabled returning id`;
/** REST-hooks convention: a receiver answering 410 Gone has unsubscribed (its deliveries and log go with it). */
const UNSUBSCRIBE = `delete from webhook_endpoints where id = ? and kind = 'rest_hook'`;

export interface RecordDeps {
  jobs: Jobs;
  baseUrl: string;
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

/**
 * Writes one attempt's outcome in one transaction: the log line, the delivery's new state (done, failed, or pending
 * until its next slot), and the endpoint's consequences (failure count, disabling with a mail, 410 unsubscribing).
 */
export async function recordAttempt(db: Db, deps: RecordDeps, a: TakenAttempt, attemptId: string, startedAt: Date, result: SendResult, now: Date): Promise<void> {
  const attempt = a.attempts + 1;
  const gone = a.kind === 'rest_hook' && result.statusCode === 410;
  const retryAt = result.outcome === 'failed' && !a.manual && !gone && attempt < MAX_ATTEMPTS ? nextAttemptAt(new Date(a.first_attempt_at), attempt) : null;
  const state = result.outcome === 'succeeded' ? 'succeeded' : retryAt ? 'pending' : 'failed';
  await db.transaction(async (tx) => {
    const [own] = await tx.execute<{ id: string }[]>(FINISH, [state, 1, retryAt, null, now, a.id, a.lease_token]);
    await tx.execute(LOG, [
      attemptId,
      attempt,
      result.outcome,
      result.statusCode,
      result.responseBody?.slice(0, RESPONSE_BODY_CHARS) ?? null,
      Math.round(result.durationMs),
      result.error,
      retryAt,
      startedAt,
      a.id,
    ]);
    if (!own) return;
    if (gone) {
      await tx.execute(UNSUBSCRIBE, [a.endpoint_id]);
      return;
    }
    if (result.outcome === 'blocked') {
      await disable(tx, deps, a, result.error ?? 'The URL points at a private or internal address', now);
      return;
    }
    // Manual replays and test pings say nothing about the endpoint's health.
    if (a.manual) return;
    if (result.outcome === 'succeeded') {
      await tx.execute(RESET_FAILURES, [a.endpoint_id]);
      return;
    }
    const [count] = await tx.execute<{ failure_count: number }[]>(COUNT_FAILURE, [a.endpoint_id]);
    if ((count?.failure_count ?? 0) >= DISABLE_AFTER_FAILURES) {
      await disable(tx, deps, a, `${DISABLE_AFTER_FAILURES} deliveries failed in a row; the last one: ${describe(result)}`, now);
    }
  });
}
