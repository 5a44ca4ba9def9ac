import type { Db } from '@leadwire/db';
import { z } from 'zod';
import type { Deps } from '../context.ts';
import type { JobDefinition } from './boss.ts';

export const CLEANUP_QUEUE = 'maintenance.cleanup';
/** Hourly, in UTC: these tables only grow between runs, and an hour of expired rows is small. */
export const CLEANUP_CRON = '0 * * * *';

/**
 * Deletes go in slices so that a backlog (say, after the workers were down for a day) never becomes one long
 * statement holding locks that the request path's idempotency claims and rate-limit hits would queue behind. Each
 * statement's one parameter is the run's time, from `deps.clock`.
 */
const SLICE = 5_000;

/** Matches the replay window of the idempotency middleware: a record older than this can only be overwritten. */
const DELETE_IDEMPOTENCY = `
with doomed as (
  select api_key_id, key from idempotency_records where created_at < ?::timestamptz - interval '24 hours' limit ${SLICE}
), gone as (
  delete from idempotency_records r using doomed d where r.api_key_id = d.api_key_id and r.key = d.key returning 1
)
select count(*)::int as n from gone`;

/**
 * Windows are one minute long (a day for `:day` buckets, an hour for webhook deliveries and lead captures); a window
 * is deleted a whole window after it ended, leaving time for requests still counting against it.
 */
const DELETE_RATE_LIMITS = `
with doomed as (
  select bucket, window_start from rate_limit_counters
  where window_start < ?::timestamptz - case when bucket like '%:day' then interval '2 days'
    when bucket like 'webhooks:%' or bucket like 'capture:%' then interval '2 hours' else interval '2 minutes' end
  limit ${SLICE}
), gone as (
  delete from rate_limit_counters c using doomed d where c.bucket = d.bucket and c.window_start = d.window_start
  returning 1
)
select count(*)::int as n from gone`;

/** Expired account credentials and old sign-in attempts: kept a day past their use for support questions. */
const sliced = (table: string, where: string) => `
with doomed as (select id from ${table} where ${where} limit ${SLICE}),
gone as (delete from ${table} t using doomed d where t.id = d.id returning 1)
select count(*)::int as n from gone`;

const DELETE_SESSIONS = sliced('sessions', `expires_at < ?::timestamptz - interval '1 day'`);
const DELETE_RESET_TOKENS = sliced('password_reset_tokens', `expires_at < ?::timestamptz - interval '1 day'`);
const DELETE_INVITES = sliced('invites', `expires_at < ?::timestamptz - interval '1 day' and accepted_at is null`);
/** The brute-force throttle looks back 15 minutes; a day of attempts is plenty. */
const DELETE_SIGN_IN_ATTEMPTS = sliced('sign_in_attempts', `created_at < ?::timestamptz - interval '1 day'`);

/**
 * The delivery log is kept 30 days (deliveries with their attempts, which cascade). Events themselves stay in
 * outbox_events for timelines: this never touches them.
 */
const DELETE_WEBHOOK_DELIVERIES = sliced('webhook_deliveries', `created_at < ?::timestamptz - interval '30 days'`);

/** Listen rows of server processes that died while streaming: they would keep the outbox trigger notifying for nobody. */
const DELETE_WEBHOOK_LISTENERS = sliced('webhook_listeners', `expires_at < ?::timestamptz`);

/**
 * Contact counters are bumped after commit on the fast path, so a crash between the two can leave one behind; the
 * hourly run sets every drifted counter back to the live count (and gives an organization without one its counter).
 */
const RECONCILE_CONTACT_COUNTS = `
insert into contact_counters (organization_id, contact_count)
select o.id, (select count(*)::int from contacts c where c.organization_id = o.id and c.deleted_at is null)
from organizations o
on conflict (organization_id) do update set contact_count = excluded.contact_count
  where contact_counters.contact_count <> excluded.contact_count
returning organization_id`;

async function deleteInSlices(db: Db, statement: string, now: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await db.execute<{ n: number }[]>(statement, [now]);
    const n = row?.n ?? 0;
    total += n;
    if (n < SLICE) return total;
  }
}

export interface CleanupResult {
  idempotencyRecords: number;
  rateLimitCounters: number;
  sessions: number;
  passwordResetTokens: number;
  invites: number;
  signInAttempts: number;
  webhookDeliveries: number;
  webhookListeners: number;
  /** Organizations whose contact counter had drifted and was corrected. */
  contactCountsFixed: number;
}

export async function runCleanup(db: Db, now: Date): Promise<CleanupResult> {
  return {
    idempotencyRecords: await deleteInSlices(db, DELETE_IDEMPOTENCY, now),
    rateLimitCounters: await deleteInSlices(db, DELETE_RATE_LIMITS, now),
    sessions: await deleteInSlices(db, DELETE_SESSIONS, now),
    passwordResetTokens: await deleteInSlices(db, DELETE_RESET_TOKENS, now),
    invites: await deleteInSlices(db, DELETE_INVITES, now),
    signInAttempts: await deleteInSlices(db, DELETE_SIGN_IN_ATTEMPTS, now),
    webhookDeliveries: await deleteInSlices(db, DELETE_WEBHOOK_DELIVERIES, now),
    webhookListeners: await deleteInSlices(db, DELETE_WEBHOOK_LISTENERS, now),
    contactCountsFixed: (await db.execute<unknown[]>(RECONCILE_CONTACT_COUNTS)).length,
  };
}

/** `maintenance.cleanup`: pg-boss sends one job per cron tick across all processes, so it runs once an hour. */
export function cleanupJob(deps: Deps): JobDefinition<Record<string, unknown>> {
  return {
    queue: CLEANUP_QUEUE,
    cron: CLEANUP_CRON,
    // A failed run is picked up by the next tick anyway; a couple of quick retries cover a blip.
    retryLimit: 2,
    retryDelay: 60,
    // A job (the cron's, or an operator's) wakes a worker at once rather than at its next poll.
    queueOptions: { notify: true },
    parse: (data) => z.record(z.string(), z.unknown()).parse(data ?? {}),
    async handle() {
      const deleted = await runCleanup(deps.db, deps.clock.now());
      deps.log.info({ deleted }, 'maintenance cleanup done');
    },
  };
}
