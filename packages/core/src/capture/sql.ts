import { qb, sql, statement } from '@leadwire/db';

/** Statements of the lead-capture intake. Times come in as parameters from `deps.clock`. */

/** What intake needs of an organization: its plan and contact cap. */
export const CAPTURE_ORG = statement<{ orgId: string }>()((p) =>
  qb.selectFrom('organizations').select(['id', 'plan', 'contact_booster']).where('id', '=', sql<string>`${p.orgId}::uuid`),
);

/** One submission kept in the organization's hourly window, in the counters shared by every process. */
export const COUNT_CAPTURE = statement<{ bucket: string; windowStart: Date }>()((p) =>
  qb
    .insertInto('rate_limit_counters')
    .values({ bucket: p.bucket, window_start: sql<Date>`${p.windowStart}::timestamptz`, count: sql.lit(1) })
    .onConflict((oc) =>
      oc.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({ count: eb(eb.ref('rate_limit_counters.count'), '+', sql.lit(1)) })),
    )
    .returning('count'),
);
