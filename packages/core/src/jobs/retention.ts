import { qb, sql, statement, type Db } from '@leadwire/db';
import type { Config } from '../config.ts';
import { deleteInSlices, GONE, LIMIT } from './slices.ts';

/**
 * The tables that grow with traffic and have a bound (docs/operating.md, "Retention"). Each statement deletes one
 * slice of the rows created more than `days` days before the run's time; each table's BRIN index on `created_at`
 * (Migration20261126110000) finds them without a scan of the table and costs the insert path next to nothing. A bound
 * of 0 keeps the rows: its statement is not run at all.
 */
type Bound = { now: Date; days: number };
const cutoff = (p: Bound) => sql<Date>`${p.now}::timestamptz - make_interval(days => ${p.days}::int)`;

/**
 * Events still waiting in outbox_pending are kept whatever their age: their deliveries have not been written yet.
 * Deliveries keep their own copy of the body, so the delivery log and redelivery never need the event row.
 */
const DELETE_EVENTS = statement<Bound>()((p) =>
  qb
    .with('doomed', (db) =>
      db
        .selectFrom('outbox_events as e')
        .select('e.id')
        .where('e.created_at', '<', cutoff(p))
        .where((eb) =>
          eb.not(eb.exists(eb.selectFrom('outbox_pending as q').select(sql.lit(1).as('one')).whereRef('q.event_id', '=', 'e.id'))),
        )
        .limit(LIMIT),
    )
    .with('gone', (db) =>
      db.deleteFrom('outbox_events as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

const DELETE_PAGE_VIEWS = statement<Bound>()((p) =>
  qb
    .with('doomed', (db) => db.selectFrom('page_views').select('id').where('created_at', '<', cutoff(p)).limit(LIMIT))
    .with('gone', (db) =>
      db.deleteFrom('page_views as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/** Views of a visitor who never identified: identifying attaches them to the contact, after which the longer bound holds. */
const DELETE_ANONYMOUS_PAGE_VIEWS = statement<Bound>()((p) =>
  qb
    .with('doomed', (db) =>
      db.selectFrom('page_views').select('id').where('created_at', '<', cutoff(p)).where('contact_id', 'is', null).limit(LIMIT),
    )
    .with('gone', (db) =>
      db.deleteFrom('page_views as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/** Custom website events (tracking/events.ts) live as long as page views: the same two bounds. */
const DELETE_TRACKING_EVENTS = statement<Bound>()((p) =>
  qb
    .with('doomed', (db) => db.selectFrom('tracking_events').select('id').where('created_at', '<', cutoff(p)).limit(LIMIT))
    .with('gone', (db) =>
      db.deleteFrom('tracking_events as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

const DELETE_ANONYMOUS_TRACKING_EVENTS = statement<Bound>()((p) =>
  qb
    .with('doomed', (db) =>
      db.selectFrom('tracking_events').select('id').where('created_at', '<', cutoff(p)).where('contact_id', 'is', null).limit(LIMIT),
    )
    .with('gone', (db) =>
      db.deleteFrom('tracking_events as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/** Only finished runs: a queued or running one is still work in progress, however old. */
const DELETE_WORKFLOW_RUNS = statement<Bound>()((p) =>
  qb
    .with('doomed', (db) =>
      db.selectFrom('workflow_runs').select('id').where('created_at', '<', cutoff(p)).where('finished_at', 'is not', null).limit(LIMIT),
    )
    .with('gone', (db) =>
      db.deleteFrom('workflow_runs as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/** Deliveries with their attempts, which cascade. */
const DELETE_WEBHOOK_DELIVERIES = statement<Bound>()((p) =>
  qb
    .with('doomed', (db) => db.selectFrom('webhook_deliveries').select('id').where('created_at', '<', cutoff(p)).limit(LIMIT))
    .with('gone', (db) =>
      db.deleteFrom('webhook_deliveries as t').using('doomed as d').whereRef('t.id', '=', 'd.id').returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/** The overview's hourly counts, by their hour (the BRIN on `hour` finds them). */
const DELETE_ACTIVITY = statement<Bound>()((p) =>
  qb
    .with('doomed', (db) =>
      db
        .selectFrom('activity_hourly')
        .select(['organization_id', 'series', 'hour', 'subject', 'outcome'])
        .where('hour', '<', cutoff(p))
        .limit(LIMIT),
    )
    .with('gone', (db) =>
      db
        .deleteFrom('activity_hourly as t')
        .using('doomed as d')
        .whereRef('t.organization_id', '=', 'd.organization_id')
        .whereRef('t.series', '=', 'd.series')
        .whereRef('t.hour', '=', 'd.hour')
        .whereRef('t.subject', '=', 'd.subject')
        .whereRef('t.outcome', '=', 'd.outcome')
        .returning(sql.lit(1).as('one')),
    )
    .selectFrom('gone')
    .select(GONE),
);

/** The bounds in days, from the configuration. */
export interface Retention {
  events: number;
  pageViews: number;
  anonymousPageViews: number;
  workflowRuns: number;
  webhookDeliveries: number;
  activity: number;
}

export const retentionOf = (c: Config): Retention => ({
  events: c.EVENT_RETENTION_DAYS,
  pageViews: c.PAGE_VIEW_RETENTION_DAYS,
  anonymousPageViews: c.ANONYMOUS_PAGE_VIEW_RETENTION_DAYS,
  workflowRuns: c.WORKFLOW_RUN_RETENTION_DAYS,
  webhookDeliveries: c.DELIVERY_LOG_RETENTION_DAYS,
  activity: c.ACTIVITY_RETENTION_DAYS,
});

/** Tables bounded by another table's knob: custom website events by the page views' (docs/website.md). */
const SAME_BOUND = {
  customEvents: ['pageViews', DELETE_TRACKING_EVENTS],
  anonymousCustomEvents: ['anonymousPageViews', DELETE_ANONYMOUS_TRACKING_EVENTS],
} as const;

export type RetentionResult = { [K in keyof Retention | keyof typeof SAME_BOUND]: number };

const STATEMENTS = {
  events: DELETE_EVENTS,
  pageViews: DELETE_PAGE_VIEWS,
  anonymousPageViews: DELETE_ANONYMOUS_PAGE_VIEWS,
  workflowRuns: DELETE_WORKFLOW_RUNS,
  webhookDeliveries: DELETE_WEBHOOK_DELIVERIES,
  activity: DELETE_ACTIVITY,
} as const;

/** Rows deleted per table; a table whose bound is 0 is not touched. */
export async function runRetention(db: Db, now: Date, retention: Retention): Promise<RetentionResult> {
  const result = {} as RetentionResult;
  for (const key of Object.keys(STATEMENTS) as (keyof Retention)[]) {
    const days = retention[key];
    result[key] = days > 0 ? await deleteInSlices(db, STATEMENTS[key], { now, days }) : 0;
  }
  for (const [key, [bound, doomed]] of Object.entries(SAME_BOUND) as [
    keyof typeof SAME_BOUND,
    (typeof SAME_BOUND)[keyof typeof SAME_BOUND],
  ][]) {
    const days = retention[bound];
    result[key] = days > 0 ? await deleteInSlices(db, doomed, { now, days }) : 0;
  }
  return result;
}
