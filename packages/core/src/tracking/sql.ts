/** Statements of the tracking service, in one place. Times come in as parameters from `deps.clock`. */

/**
 * Counts a page view in its organization's one-minute window, only for an organization that exists (unknown ids
 * leave no counter rows behind). `hits` is null for an unknown organization.
 */
export const COUNT_PAGE_VIEW = `
with o as (select id from organizations where id = ?::uuid),
hit as (
  insert into rate_limit_counters (bucket, window_start, count)
  select 'track:' || o.id, ?::timestamptz, 1 from o
  on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
  returning count
)
select (select count from hit) as hits`;

const CONTACT_REF = 'c.id, c.first_name, c.email';

export const LIVE_CONTACT_BY_ID = `
select ${CONTACT_REF} from contacts c where c.id = ?::uuid and c.organization_id = ? and c.deleted_at is null`;

/** Emails are stored lowercased; the live-email index serves this. */
export const LIVE_CONTACT_BY_EMAIL = `
select ${CONTACT_REF} from contacts c where c.organization_id = ? and c.email = ? and c.deleted_at is null`;

export const CONTACT_OF_VISITOR = `
select ${CONTACT_REF} from tracking_visitors v join contacts c on c.id = v.contact_id and c.deleted_at is null
where v.organization_id = ? and v.visitor_id = ?`;

export const REMEMBER_VISITOR = `
insert into tracking_visitors (id, organization_id, visitor_id, contact_id) values (?, ?, ?, ?)
on conflict (organization_id, visitor_id) do update set contact_id = excluded.contact_id`;

/** The visitor's views recorded before anyone knew who they were. */
export const ATTACH_ANONYMOUS_VIEWS = `
with a as (
  update page_views set contact_id = ? where organization_id = ? and visitor_id = ? and contact_id is null returning 1
)
select count(*)::int as n from a`;

export const INSERT_PAGE_VIEW = `
insert into page_views (id, organization_id, contact_id, visitor_id, url, referrer, title, created_at)
values (?, ?, ?, ?, ?, ?, ?, ?)`;

export interface ContactRef {
  id: string;
  first_name: string | null;
  email: string | null;
}

export const SITE_DOMAIN = `select site_domain from organizations where id = ?`;
export const SET_SITE_DOMAIN = `update organizations set site_domain = ? where id = ?`;

export const INSERT_TRACKED_LINK = `
insert into tracked_links (id, organization_id, contact_id, message_id, token, url, created_at) values (?, ?, ?, ?, ?, ?, ?)`;

export const TRACKED_LINK = `
select l.organization_id, l.contact_id, l.message_id, l.url, c.first_name, c.email, c.deleted_at
from tracked_links l join contacts c on c.id = l.contact_id
where l.token = ?`;

export interface TrackedLinkRow {
  organization_id: string;
  contact_id: string;
  message_id: string | null;
  url: string;
  first_name: string | null;
  email: string | null;
  deleted_at: Date | null;
}
