import { qb, sql, statement, type Db } from '@leadwire/db';
import { z } from 'zod';
import { ConfigSchema } from '../config.ts';
import type { Deps } from '../context.ts';
import type { JobDefinition } from './boss.ts';
import { jobQueue } from './queue.ts';
import { retentionOf, runRetention, type Retention, type RetentionResult } from './retention.ts';
import { deleteInSlices, GONE, LIMIT } from './slices.ts';

export const CLEANUP_QUEUE = 'maintenance.cleanup';
/** Sent by its cron (or an operator): no payload. */
export const cleanupQueue = jobQueue(CLEANUP_QUEUE, z.record(z.string(), z.unknown()));
/** Hourly, in UTC: these tables only grow between runs, and an hour of expired rows is small. */
export const CLEANUP_CRON = '0 * * * *';

/* Each statement deletes one slice (slices.ts); its one parameter is the run's time, from `deps.clock`. */
const dayBefore = (now: Date) => sql<Date>`${now}::timestamptz - interval '1 day'`;

/** Matches the replay window of the idempotency middleware: a record older than this can only be overwritten. */
const DELETE_IDEMPOTENCY = statement<{ now: Date }>()((p) =>
  qb
    .with('doomed', (db) =>
      db
        .selectFrom('idempotency_records')
        .select(['api_key_id', 'key'])
        .where('created_at', '<', sql<Date>`${p.now}::timestamptz - interval '24 hours'`)
        .limit(LIMIT),
    )
    .with('gone', (db) =>
      db
        .deleteFrom('idempotency_records as r')
        .using('doomed as d')
        .whereRef('r.api_key_id', '=', 'd.api_key_id')
        .whereRef('r.key', '=', 'd.key')
        .returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/**
 * Windows are one minute long (a day for `:day` buckets, an hour for webhook deliveries and lead captures); a window
 * is deleted a whole window after it ended, leaving time for requests still counting against it.
 */
const DELETE_RATE_LIMITS = statement<{ now: Date }>()((p) =>
  qb
    .with('doomed', (db) =>
      db
        .selectFrom('rate_limit_counters')
        .select(['bucket', 'window_start'])
        .where('window_start', '<', (eb) => {
          const bucket = eb.ref('bucket');
          return sql<Date>`${p.now}::timestamptz - case when ${bucket} like '%:day' then interval '2 days'
    when ${bucket} like 'webhooks:%' or ${bucket} like 'capture:%' then interval '2 hours' else interval '2 minutes' end`;
        })
        .limit(LIMIT),
    )
    .with('gone', (db) =>
      db
        .deleteFrom('rate_limit_counters as c')
        .using('doomed as d')
        .whereRef('c.bucket', '=', 'd.bucket')
        .whereRef('c.window_start', '=', 'd.window_start')
        .returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/** Expired account credentials and old sign-in attempts: kept a day past their use for support questions. */
const DELETE_SESSIONS = statement<{ now: Date }>()((p) =>
  qb
    .with('doomed', (db) => db.selectFrom('sessions').select('id').where('expires_at', '<', dayBefore(p.now)).limit(LIMIT))
    .with('gone', (db) => db.deleteFrom('sessions as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')))
    .selectFrom('gone')
    .select(GONE),
);
const DELETE_RESET_TOKENS = statement<{ now: Date }>()((p) =>
  qb
    .with('doomed', (db) => db.selectFrom('password_reset_tokens').select('id').where('expires_at', '<', dayBefore(p.now)).limit(LIMIT))
    .with('gone', (db) =>
      db.deleteFrom('password_reset_tokens as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);
const DELETE_INVITES = statement<{ now: Date }>()((p) =>
  qb
    .with('doomed', (db) =>
      db.selectFrom('invites').select('id').where('expires_at', '<', dayBefore(p.now)).where('accepted_at', 'is', null).limit(LIMIT),
    )
    .with('gone', (db) => db.deleteFrom('invites as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')))
    .selectFrom('gone')
    .select(GONE),
);
/** The brute-force throttle looks back 15 minutes; a day of attempts is plenty. */
const DELETE_SIGN_IN_ATTEMPTS = statement<{ now: Date }>()((p) =>
  qb
    .with('doomed', (db) => db.selectFrom('sign_in_attempts').select('id').where('created_at', '<', dayBefore(p.now)).limit(LIMIT))
    .with('gone', (db) =>
      db.deleteFrom('sign_in_attempts as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/** Listen rows of server processes that died while streaming: they would keep the outbox trigger notifying for nobody. */
const DELETE_WEBHOOK_LISTENERS = statement<{ now: Date }>()((p) =>
  qb
    .with('doomed', (db) =>
      db.selectFrom('webhook_listeners').select('id').where('expires_at', '<', sql<Date>`${p.now}::timestamptz`).limit(LIMIT),
    )
    .with('gone', (db) =>
      db.deleteFrom('webhook_listeners as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/**
 * Contact counters are bumped after commit on the fast path, so a crash between the two can leave one behind; the
 * hourly run sets every drifted counter back to the live count (and gives an organization without one its counter).
 */
const RECONCILE_CONTACT_COUNTS = statement()(() =>
  qb
    .insertInto('contact_counters')
    .columns(['organization_id', 'contact_count'])
    .expression(
      qb
        .selectFrom('organizations as o')
        .select((eb) => [
          'o.id as organization_id',
          sql<number>`(${eb
            .selectFrom('contacts as c')
            .select(sql<number>`count(*)::int`.as('n'))
            .whereRef('c.organization_id', '=', 'o.id')
            .where('c.deleted_at', 'is', null)})`.as('contact_count'),
        ]),
    )
    .onConflict((oc) =>
      oc
        .column('organization_id')
        .doUpdateSet((eb) => ({ contact_count: eb.ref('excluded.contact_count') }))
        .whereRef('contact_counters.contact_count', '<>', 'excluded.contact_count'),
    )
    .returning('organization_id'),
);

export interface CleanupResult extends RetentionResult {
  idempotencyRecords: number;
  rateLimitCounters: number;
  sessions: number;
  passwordResetTokens: number;
  invites: number;
  signInAttempts: number;
  webhookListeners: number;
  /** Organizations whose contact counter had drifted and was corrected. */
  contactCountsFixed: number;
}

/** The defaults' bounds, for callers (tests, tools) that run a cleanup without a configuration of their own. */
const DEFAULT_RETENTION = retentionOf(ConfigSchema.parse({}));

export async function runCleanup(db: Db, now: Date, retention: Retention = DEFAULT_RETENTION): Promise<CleanupResult> {
  return {
    idempotencyRecords: await deleteInSlices(db, DELETE_IDEMPOTENCY, { now }),
    rateLimitCounters: await deleteInSlices(db, DELETE_RATE_LIMITS, { now }),
    sessions: await deleteInSlices(db, DELETE_SESSIONS, { now }),
    passwordResetTokens: await deleteInSlices(db, DELETE_RESET_TOKENS, { now }),
    invites: await deleteInSlices(db, DELETE_INVITES, { now }),
    signInAttempts: await deleteInSlices(db, DELETE_SIGN_IN_ATTEMPTS, { now }),
    webhookListeners: await deleteInSlices(db, DELETE_WEBHOOK_LISTENERS, { now }),
    contactCountsFixed: (await db.run(RECONCILE_CONTACT_COUNTS, {})).length,
    ...(await runRetention(db, now, retention)),
  };
}

/** `maintenance.cleanup`: pg-boss sends one job per cron tick across all processes, so it runs once an hour. */
export function cleanupJob(deps: Deps): JobDefinition<Record<string, unknown>> {
  return {
    queue: cleanupQueue.name,
    cron: CLEANUP_CRON,
    // A failed run is picked up by the next tick anyway; a couple of quick retries cover a blip.
    retryLimit: 2,
    retryDelay: 60,
    // A job (the cron's, or an operator's) wakes a worker at once rather than at its next poll.
    queueOptions: { notify: true },
    parse: (data) => cleanupQueue.parse(data ?? {}),
    async handle() {
      const deleted = await runCleanup(deps.db, deps.clock.now(), retentionOf(deps.config));
      deps.log.info({ deleted }, 'maintenance cleanup done');
    },
  };
}
