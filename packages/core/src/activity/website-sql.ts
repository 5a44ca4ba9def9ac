import { type DB, type ExpressionBuilder, qb, sql, statement } from '@leadwire/db';

/**
 * Website analytics (issue 29): the tracking snippet's page views of one workspace over a period, optionally one page,
 * read from `page_views` (kept 395 days, anonymous ones 30: docs/operating.md). Pages, referrers and UTM values are
 * taken from the stored URL and referrer; nothing else about a visitor is kept (no address, no country).
 */
type Filter = { orgId: string; from: Date; page: string | null };
type Views = ExpressionBuilder<DB, 'page_views'>;

const ORIGIN = sql<Date>`timestamptz '2000-01-01 00:00:00+00'`;
/** The URL's path, without scheme, host, query or fragment: what "a page" is. */
const pathOf = (eb: Views) =>
  sql<string | null>`coalesce(nullif(substring(${eb.ref('url')} from '^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]*([^?#]*)'), ''), '/')`;
const paramOf = (eb: Views, name: string) =>
  sql<string | null>`nullif(substring(${eb.ref('url')} from ${sql.lit(`[?&]${name}=([^&#]*)`)}), '')`;
/** A referrer's host: where visitors came from. */
const referrerOf = (eb: Views) => sql<string | null>`substring(${eb.ref('referrer')} from '^[a-zA-Z][a-zA-Z0-9+.-]*://([^/?#:]+)')`;

const filtered = (p: Filter) =>
  qb
    .selectFrom('page_views')
    .where('page_views.organization_id', '=', p.orgId)
    .where('page_views.created_at', '>=', p.from)
    .where((eb) => eb.or([sql<boolean>`${p.page}::text is null`, eb(pathOf(eb), '=', p.page)]));

export const WEBSITE_SERIES = statement<Filter & { stride: string }>()((p) =>
  filtered(p)
    .select((eb) => [
      sql<Date>`date_bin(${p.stride}::interval, ${eb.ref('created_at')}, ${ORIGIN})`.as('bucket'),
      sql<number>`count(*)::int`.as('views'),
      sql<number>`count(distinct ${eb.ref('visitor_id')})::int`.as('visitors'),
    ])
    .groupBy(sql.lit(1)),
);

export const WEBSITE_TOTALS = statement<Filter>()((p) =>
  filtered(p).select((eb) => [
    sql<number>`count(*)::int`.as('views'),
    sql<number>`count(distinct ${eb.ref('visitor_id')})::int`.as('visitors'),
    sql<number>`(count(*) filter (where ${eb.ref('visitor_id')} is null))::int`.as('anonymous'),
    sql<number>`count(distinct ${eb.ref('contact_id')})::int`.as('identified'),
  ]),
);

/** The ten busiest values of one breakdown (a page, a referrer's host, a UTM value), with their views and visitors. */
const top = (value: (eb: Views) => ReturnType<typeof pathOf>) =>
  statement<Filter>()((p) =>
    filtered(p)
      .select((eb) => [
        value(eb).as('value'),
        sql<number>`count(*)::int`.as('views'),
        sql<number>`count(distinct ${eb.ref('visitor_id')})::int`.as('visitors'),
      ])
      .where((eb) => eb(value(eb), 'is not', null))
      .groupBy(sql.lit(1))
      .orderBy(sql.lit(2), 'desc')
      .orderBy(sql.lit(1))
      .limit(10),
  );

export const TOP_PAGES = top(pathOf);
export const TOP_REFERRERS = top(referrerOf);
export const TOP_UTM_SOURCES = top((eb) => paramOf(eb, 'utm_source'));
export const TOP_UTM_CAMPAIGNS = top((eb) => paramOf(eb, 'utm_campaign'));

/** Visitors who became contacts (identified by a tracked link, `?email=`, or a form), most views first. */
export const IDENTIFIED = statement<Filter>()((p) =>
  filtered(p)
    .innerJoin('contacts as c', (j) => j.onRef('c.id', '=', 'page_views.contact_id').on('c.deleted_at', 'is', null))
    .select((eb) => [
      'c.id',
      'c.email',
      'c.first_name',
      'c.last_name',
      sql<number>`count(*)::int`.as('views'),
      eb.fn.max('page_views.created_at').as('last_seen'),
    ])
    .groupBy(['c.id', 'c.email', 'c.first_name', 'c.last_name'])
    .orderBy(sql.lit(5), 'desc')
    .orderBy('c.id')
    .limit(10),
);
