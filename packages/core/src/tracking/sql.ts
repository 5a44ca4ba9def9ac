import { qb, sql, statement } from '@leadwire/db';

/** Statements of the tracking service, in one place. Times come in as parameters from `deps.clock`. */

/**
 * Counts a page view in its organization's one-minute window, only for an organization that exists (unknown ids
 * leave no counter rows behind). `hits` is null for an unknown organization.
 */
export const COUNT_PAGE_VIEW = statement<{ orgId: string; windowStart: Date }>()((p) =>
  qb
    .with('o', (db) => db.selectFrom('organizations').select('id').where('id', '=', sql<string>`${p.orgId}::uuid`))
    .with('hit', (db) =>
      db
        .insertInto('rate_limit_counters')
        .columns(['bucket', 'window_start', 'count'])
        .expression(
          db
            .selectFrom('o')
            .select((eb) => [
              sql<string>`'track:' || ${eb.ref('o.id')}`.as('bucket'),
              sql<Date>`${p.windowStart}::timestamptz`.as('window_start'),
              sql.lit(1).as('count'),
            ]),
        )
        .onConflict((oc) =>
          oc.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({ count: sql<number>`${eb.ref('rate_limit_counters.count')} + 1` })),
        )
        .returning('count'),
    )
    .selectNoFrom((eb) => eb.selectFrom('hit').select('count').as('hits')),
);

export const LIVE_CONTACT_BY_ID = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(['c.id', 'c.first_name', 'c.email'])
    .where('c.id', '=', sql<string>`${p.id}::uuid`)
    .where('c.organization_id', '=', p.orgId)
    .where('c.deleted_at', 'is', null),
);
export type ContactRef = NonNullable<(typeof LIVE_CONTACT_BY_ID)['row']>;

/** Emails are stored lowercased; the live-email index serves this. */
export const LIVE_CONTACT_BY_EMAIL = statement<{ orgId: string; email: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(['c.id', 'c.first_name', 'c.email'])
    .where('c.organization_id', '=', p.orgId)
    .where('c.email', '=', p.email)
    .where('c.deleted_at', 'is', null),
);

export const CONTACT_OF_VISITOR = statement<{ orgId: string; visitorId: string }>()((p) =>
  qb
    .selectFrom('tracking_visitors as v')
    .innerJoin('contacts as c', (j) => j.onRef('c.id', '=', 'v.contact_id').on('c.deleted_at', 'is', null))
    .select(['c.id', 'c.first_name', 'c.email'])
    .where('v.organization_id', '=', p.orgId)
    .where('v.visitor_id', '=', p.visitorId),
);

export const REMEMBER_VISITOR = statement<{ id: string; orgId: string; visitorId: string; contactId: string }>()((p) =>
  qb
    .insertInto('tracking_visitors')
    .values({ id: p.id, organization_id: p.orgId, visitor_id: p.visitorId, contact_id: p.contactId })
    .onConflict((oc) => oc.columns(['organization_id', 'visitor_id']).doUpdateSet((eb) => ({ contact_id: eb.ref('excluded.contact_id') }))),
);

/** The visitor's views recorded before anyone knew who they were. */
export const ATTACH_ANONYMOUS_VIEWS = statement<{ contactId: string; orgId: string; visitorId: string }>()((p) =>
  qb
    .with('a', (db) =>
      db
        .updateTable('page_views')
        .set({ contact_id: p.contactId })
        .where('organization_id', '=', p.orgId)
        .where('visitor_id', '=', p.visitorId)
        .where('contact_id', 'is', null)
        .returning(sql<number>`1`.as('one')),
    )
    .selectFrom('a')
    .select(sql<number>`count(*)::int`.as('n')),
);

/** The visitor's custom events recorded before anyone knew who they were. */
export const ATTACH_ANONYMOUS_EVENTS = statement<{ contactId: string; orgId: string; visitorId: string }>()((p) =>
  qb
    .updateTable('tracking_events')
    .set({ contact_id: p.contactId })
    .where('organization_id', '=', p.orgId)
    .where('visitor_id', '=', p.visitorId)
    .where('contact_id', 'is', null),
);

export const INSERT_TRACKING_EVENT = statement<{
  id: string;
  orgId: string;
  contactId: string | null;
  visitorId: string | null;
  name: string;
  props: string;
  url: string;
  now: Date;
}>()((p) =>
  qb.insertInto('tracking_events').values({
    id: p.id,
    organization_id: p.orgId,
    contact_id: p.contactId,
    visitor_id: p.visitorId,
    name: p.name,
    props: sql<Record<string, string | number | boolean | null>>`${p.props}::jsonb`,
    url: p.url,
    created_at: p.now,
  }),
);

/** The goals report: custom events of a period by name, identified (a contact known) or not. */
export const GOALS = statement<{ orgId: string; since: Date; until: Date }>()((p) =>
  qb
    .selectFrom('tracking_events')
    .select((eb) => [
      'name',
      eb.fn.countAll<string>().as('total'),
      sql<string>`count(*) filter (where ${eb.ref('contact_id')} is null)`.as('anonymous'),
    ])
    .where('organization_id', '=', p.orgId)
    .where('created_at', '>=', p.since)
    .where('created_at', '<', p.until)
    .groupBy('name')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('name')
    .limit(sql.lit(100)),
);

export const INSERT_PAGE_VIEW = statement<{
  id: string;
  orgId: string;
  contactId: string | null;
  visitorId: string | null;
  url: string;
  referrer: string | null;
  title: string | null;
  now: Date;
}>()((p) =>
  qb.insertInto('page_views').values({
    id: p.id,
    organization_id: p.orgId,
    contact_id: p.contactId,
    visitor_id: p.visitorId,
    url: p.url,
    referrer: p.referrer,
    title: p.title,
    created_at: p.now,
  }),
);

export const SITE_DOMAIN = statement<{ orgId: string }>()((p) =>
  qb.selectFrom('organizations').select('site_domain').where('id', '=', p.orgId),
);
export const SET_SITE_DOMAIN = statement<{ orgId: string; siteDomain: string | null }>()((p) =>
  qb.updateTable('organizations').set({ site_domain: p.siteDomain }).where('id', '=', p.orgId),
);

export const INSERT_TRACKED_LINK = statement<{
  id: string;
  orgId: string;
  contactId: string;
  messageId: string;
  token: string;
  url: string;
  now: Date;
}>()((p) =>
  qb.insertInto('tracked_links').values({
    id: p.id,
    organization_id: p.orgId,
    contact_id: p.contactId,
    message_id: p.messageId,
    token: p.token,
    url: p.url,
    created_at: p.now,
  }),
);

export const TRACKED_LINK = statement<{ token: string }>()((p) =>
  qb
    .selectFrom('tracked_links as l')
    .innerJoin('contacts as c', 'c.id', 'l.contact_id')
    .select(['l.organization_id', 'l.contact_id', 'l.message_id', 'l.url', 'c.first_name', 'c.email', 'c.deleted_at'])
    .where('l.token', '=', p.token),
);
