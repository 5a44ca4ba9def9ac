import { qb, sql, statement } from '@leadwire/db';
import { SKIP_LIMIT } from '../webhooks/delivery/policy.ts';

/**
 * The overview's statements (issue 29). Buckets are cut with `date_bin` from a UTC origin, so neither the rollup nor the
 * overview depends on the session's time zone: an hour and a day are UTC hours and UTC days.
 */
const ORIGIN = sql<Date>`timestamptz '2000-01-01 00:00:00+00'`;
const hourOf = (ref: string) => sql<Date>`date_bin(interval '1 hour', ${sql.ref(ref)}, ${ORIGIN})`;
const dayOf = (ref: string) => sql<Date>`date_bin(interval '1 day', ${sql.ref(ref)}, ${ORIGIN})`;

/** The series the rollup recomputes from their sources; `api` is only ever added to, by the processes' flushes. */
export const ROLLED_UP = ['deliveries', 'submissions', 'page_views', 'visitors'] as const;

/** A skipped delivery over the hourly cap, told from one skipped while its endpoint was disabled, by its reason. */
const OVER_CAP = `${SKIP_LIMIT.split(' ').slice(0, 2).join(' ')}%`;

/**
 * Recomputes the rolled-up series for the hours in [from, to) and `visitors_day` for the days in [dayFrom, to), from
 * the delivery log, the submissions and the page views (each found by its BRIN on `created_at`), in one statement:
 * counts that changed are written, rows no longer backed by a source row (a pending delivery now succeeded) deleted.
 * Rewriting a window, not adding to it, makes a run idempotent: a run repeated or late changes nothing twice.
 */
export const ROLL_UP = statement<{ from: Date; to: Date; dayFrom: Date }>()((p) =>
  qb
    .with('fresh', (db) =>
      db
        .selectFrom('webhook_deliveries as d')
        .select((eb) => [
          'd.organization_id',
          sql<string>`'deliveries'`.as('series'),
          hourOf('d.created_at').as('hour'),
          sql<string>`${eb.ref('d.endpoint_id')}::text`.as('subject'),
          sql<string>`case when ${eb.ref('d.state')} in ('pending', 'in_flight') then 'pending'
  when ${eb.ref('d.state')} = 'skipped' and ${eb.ref('d.skip_reason')} like ${sql.lit(OVER_CAP)} then 'over_cap'
  else ${eb.ref('d.state')}::text end`.as('outcome'),
          sql<number>`count(*)::int`.as('count'),
        ])
        .where('d.created_at', '>=', p.from)
        .where('d.created_at', '<', p.to)
        .groupBy([sql.lit(1), sql.lit(2), sql.lit(3), sql.lit(4), sql.lit(5)])
        .unionAll(
          db
            .selectFrom('form_submissions as s')
            .select((eb) => [
              's.organization_id',
              sql<string>`'submissions'`.as('series'),
              hourOf('s.created_at').as('hour'),
              sql<string>`coalesce(${eb.ref('s.form_id')}::text, '')`.as('subject'),
              sql<string>`''`.as('outcome'),
              sql<number>`count(*)::int`.as('count'),
            ])
            .where('s.created_at', '>=', p.from)
            .where('s.created_at', '<', p.to)
            .groupBy([sql.lit(1), sql.lit(2), sql.lit(3), sql.lit(4), sql.lit(5)]),
        )
        .unionAll(
          db
            .selectFrom('page_views as v')
            .select((eb) => [
              'v.organization_id',
              sql<string>`'page_views'`.as('series'),
              hourOf('v.created_at').as('hour'),
              sql<string>`''`.as('subject'),
              sql<string>`case when ${eb.ref('v.visitor_id')} is null then 'anonymous' else 'cookie' end`.as('outcome'),
              sql<number>`count(*)::int`.as('count'),
            ])
            .where('v.created_at', '>=', p.from)
            .where('v.created_at', '<', p.to)
            .groupBy([sql.lit(1), sql.lit(2), sql.lit(3), sql.lit(4), sql.lit(5)]),
        )
        .unionAll(
          db
            .selectFrom('page_views as v')
            .select((eb) => [
              'v.organization_id',
              sql<string>`'visitors'`.as('series'),
              hourOf('v.created_at').as('hour'),
              sql<string>`''`.as('subject'),
              sql<string>`''`.as('outcome'),
              sql<number>`count(distinct ${eb.ref('v.visitor_id')})::int`.as('count'),
            ])
            .where('v.created_at', '>=', p.from)
            .where('v.created_at', '<', p.to)
            .where('v.visitor_id', 'is not', null)
            .groupBy([sql.lit(1), sql.lit(2), sql.lit(3), sql.lit(4), sql.lit(5)]),
        )
        .unionAll(
          db
            .selectFrom('page_views as v')
            .select((eb) => [
              'v.organization_id',
              sql<string>`'visitors_day'`.as('series'),
              dayOf('v.created_at').as('hour'),
              sql<string>`''`.as('subject'),
              sql<string>`''`.as('outcome'),
              sql<number>`count(distinct ${eb.ref('v.visitor_id')})::int`.as('count'),
            ])
            .where('v.created_at', '>=', p.dayFrom)
            .where('v.created_at', '<', p.to)
            .where('v.visitor_id', 'is not', null)
            .groupBy([sql.lit(1), sql.lit(2), sql.lit(3), sql.lit(4), sql.lit(5)]),
        ),
    )
    .with('up', (db) =>
      db
        .insertInto('activity_hourly')
        .columns(['organization_id', 'series', 'hour', 'subject', 'outcome', 'count'])
        .expression(db.selectFrom('fresh as f').select(['f.organization_id', 'f.series', 'f.hour', 'f.subject', 'f.outcome', 'f.count']))
        .onConflict((oc) =>
          oc
            .columns(['organization_id', 'series', 'hour', 'subject', 'outcome'])
            .doUpdateSet((eb) => ({ count: eb.ref('excluded.count') }))
            .whereRef('activity_hourly.count', '<>', 'excluded.count'),
        )
        .returning(sql.lit(1).as('one')),
    )
    .with('gone', (db) =>
      db
        .deleteFrom('activity_hourly as a')
        .where((eb) =>
          eb.or([
            eb.and([
              eb('a.series', '=', eb.fn.any(sql<string[]>`${sql.lit(`{${ROLLED_UP.join(',')}}`)}::text[]`)),
              eb('a.hour', '>=', p.from),
              eb('a.hour', '<', p.to),
            ]),
            eb.and([eb('a.series', '=', sql.lit('visitors_day')), eb('a.hour', '>=', p.dayFrom), eb('a.hour', '<', p.to)]),
          ]),
        )
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('fresh as f')
                .select(sql.lit(1).as('one'))
                .whereRef('f.organization_id', '=', 'a.organization_id')
                .whereRef('f.series', '=', 'a.series')
                .whereRef('f.hour', '=', 'a.hour')
                .whereRef('f.subject', '=', 'a.subject')
                .whereRef('f.outcome', '=', 'a.outcome'),
            ),
          ),
        )
        .returning(sql.lit(1).as('one')),
    )
    .selectNoFrom((eb) => [
      eb.selectFrom('up').select(sql<number>`count(*)::int`.as('n')).as('written'),
      eb.selectFrom('gone').select(sql<number>`count(*)::int`.as('n')).as('deleted'),
    ]),
);

/**
 * A workspace's counts over a period, summed into buckets of `stride` (an hour or a day) from `from`. `series` names
 * the series read: a day's visitors come from `visitors_day` (distinct in the day), an hour's from `visitors`.
 */
export const COUNTS = statement<{ orgId: string; from: Date; stride: string; series: string[] }>()((p) =>
  qb
    .selectFrom('activity_hourly as a')
    .select((eb) => [
      'a.series',
      'a.subject',
      'a.outcome',
      sql<Date>`date_bin(${p.stride}::interval, ${eb.ref('a.hour')}, ${ORIGIN})`.as('bucket'),
      sql<number>`sum(${eb.ref('a.count')})::int`.as('count'),
    ])
    .where('a.organization_id', '=', p.orgId)
    .where('a.series', '=', (eb) => eb.fn.any(sql<string[]>`${p.series}::text[]`))
    .where('a.hour', '>=', p.from)
    .groupBy(['a.series', 'a.subject', 'a.outcome', sql.lit(4)]),
);

/** Names for the subjects counted: the workspace's keys (with who made them, for a member's own), endpoints and forms. */
export const KEYS = statement<{ orgId: string }>()((p) =>
  qb
    .selectFrom('api_keys as k')
    .select(['k.id', 'k.name', 'k.type', 'k.created_by_id', 'k.revoked_at'])
    .where('k.organization_id', '=', p.orgId),
);
export const ENDPOINTS = statement<{ orgId: string }>()((p) =>
  qb.selectFrom('webhook_endpoints as w').select(['w.id', 'w.url', 'w.kind']).where('w.organization_id', '=', p.orgId),
);
export const FORMS = statement<{ orgId: string }>()((p) =>
  qb.selectFrom('forms as f').select(['f.id', 'f.name']).where('f.organization_id', '=', p.orgId),
);

/** The current minute's window of each of the workspace's Public keys (auth/authenticate.ts counts them there). */
export const KEY_WINDOWS = statement<{ orgId: string; minute: Date }>()((p) =>
  qb
    .selectFrom('api_keys as k')
    .innerJoin('rate_limit_counters as c', (j) =>
      j.on('c.bucket', '=', sql<string>`'key:' || ${sql.ref('k.id')}`).on('c.window_start', '=', p.minute),
    )
    .select(['k.id', 'c.count'])
    .where('k.organization_id', '=', p.orgId)
    .where('k.type', '=', sql.lit('public'))
    .where('k.revoked_at', 'is', null),
);

/** This hour's delivery reservations (webhooks/delivery/create.ts), and the workspace's contacts and plan. */
export const WORKSPACE_LIMITS = statement<{ orgId: string; bucket: string; hour: Date }>()((p) =>
  qb
    .selectFrom('organizations as o')
    .leftJoin('contact_counters as n', 'n.organization_id', 'o.id')
    .select((eb) => [
      'o.plan',
      'o.contact_booster',
      eb.fn.coalesce('n.contact_count', sql.lit(0)).as('contact_count'),
      eb
        .selectFrom('rate_limit_counters as c')
        .select('c.count')
        .where('c.bucket', '=', p.bucket)
        .where('c.window_start', '=', p.hour)
        .as('deliveries'),
    ])
    .where('o.id', '=', p.orgId),
);

/**
 * Endpoints failing now, worst first: failures in a row, or disabled, with the last failed attempt's answer. An
 * endpoint's last failures are few rows of its (endpoint, created_at) index.
 */
export const FAILING = statement<{ orgId: string }>()((p) =>
  qb
    .selectFrom('webhook_endpoints as w')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('webhook_attempts as a')
          .select(['a.created_at', 'a.status_code', 'a.error'])
          .whereRef('a.endpoint_id', '=', 'w.id')
          .where('a.outcome', 'in', [sql.lit('failed' as const), sql.lit('blocked' as const)])
          .orderBy('a.created_at', 'desc')
          .limit(1)
          .as('last'),
      (j) => j.onTrue(),
    )
    .select(['w.id', 'w.url', 'w.enabled', 'w.disabled_reason', 'w.failure_count', 'last.created_at', 'last.status_code', 'last.error'])
    .where('w.organization_id', '=', p.orgId)
    .where('w.kind', '=', sql.lit('endpoint'))
    .where((eb) => eb.or([eb('w.failure_count', '>', 0), eb.not(eb.ref('w.enabled'))]))
    .orderBy('w.enabled')
    .orderBy('w.failure_count', 'desc')
    .limit(10),
);
