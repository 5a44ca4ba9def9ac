import { INSERT_EVENTS_SQL } from '../events/outbox.ts';

/**
 * Every statement of the contact upsert path, in one place. Placeholders are `?`. Lists travel as one JSON parameter
 * (one statement text and one parameter type whatever the batch size, so each is prepared once).
 */

const CONTACT_RECORD = `v(id uuid, organization_id uuid, email text, first_name text, last_name text, phone text,
  job_title text, tags text[], custom jsonb, source text, lead_score int, score_override int, company_id uuid, created_at timestamptz,
  updated_at timestamptz)`;

/**
 * Named columns rather than `*`: these run as prepared statements, and a `*` whose expansion grew with a migration
 * would fail in processes still holding the old plan ("cached plan must not change result type").
 */
export const CONTACT_COLUMNS = `c.id, c.organization_id, c.email, c.first_name, c.last_name, c.phone, c.job_title, c.website,
  c.linkedin, c.tags, c.custom, c.source, c.lead_score, c.score_adjustment, c.score_override, c.stage, c.company_id,
  c.created_at, c.updated_at`;

/** The booking bonus input of the score, read alongside every contact the upsert may rescore. */
export const HAS_BOOKING = `exists (select 1 from bookings b where b.contact_id = c.id and b.status = 'confirmed') as has_booking`;

export const FIND_COMPANIES = `select id, domain from companies where organization_id = ? and domain in (select jsonb_array_elements_text(?::jsonb))`;

/**
 * Name matching has no unique index to lean on, so concurrent upserts of one name at one company serialise on an
 * advisory lock per identity; keys are sorted so two batches never wait on each other in a cycle.
 */
export const LOCK_IDENTITIES = `select pg_advisory_xact_lock(hashtextextended(k, 0)) from (select k from jsonb_array_elements_text(?::jsonb) as k order by k) s`;

/** Rows are locked in id order so concurrent batches touching the same contacts cannot deadlock. */
export const MATCH_BY_EMAIL = `select ${CONTACT_COLUMNS}, ${HAS_BOOKING} from contacts c where organization_id = ? and email in (select jsonb_array_elements_text(?::jsonb)) and deleted_at is null order by id for update`;

/** Upsert rule 3: when several contacts share the name at the company, the oldest wins. */
export const MATCH_BY_NAME = `
select ${CONTACT_COLUMNS}, ${HAS_BOOKING} from contacts c where id in (
  select distinct on (c.company_id, lower(c.first_name), lower(c.last_name)) c.id
  from contacts c
  join jsonb_to_recordset(?::jsonb) as k(company_id uuid, first_name text, last_name text)
    on c.company_id = k.company_id and lower(c.first_name) = k.first_name and lower(c.last_name) = k.last_name
  where c.organization_id = ? and c.deleted_at is null
  order by c.company_id, lower(c.first_name), lower(c.last_name), c.created_at, c.id
) order by id for update`;

/** The organization's contact counter, read without a lock: far from the cap that is all admission needs. */
export const READ_CONTACT_COUNT = `select contact_count from organizations where id = ?`;

/**
 * Near the cap, the organization row is locked: new contacts are then admitted one transaction at a time against the
 * counter. NO KEY UPDATE, because only a non-key column changes: foreign-key checks of other inserts are not blocked.
 */
export const LOCK_CONTACT_COUNT = `select contact_count from organizations where id = ? for no key update`;

export const BUMP_CONTACT_COUNT = `update organizations set contact_count = contact_count + ? where id = ?`;

export const INSERT_CONTACTS = `
insert into contacts (id, organization_id, email, first_name, last_name, phone, job_title, tags, custom, source,
  lead_score, score_override, company_id, created_at, updated_at)
select v.id, v.organization_id, v.email, v.first_name, v.last_name, v.phone, v.job_title, v.tags, v.custom, v.source,
  v.lead_score, v.score_override, v.company_id, v.created_at, v.updated_at
from jsonb_to_recordset(?::jsonb) as ${CONTACT_RECORD}
on conflict (organization_id, email) where deleted_at is null and email is not null do nothing
returning id`;

export const UPDATE_CONTACTS = `
update contacts c set email = v.email, first_name = v.first_name, last_name = v.last_name, phone = v.phone,
  job_title = v.job_title, tags = v.tags, custom = v.custom, lead_score = v.lead_score, score_override = v.score_override,
  company_id = v.company_id,
  updated_at = v.updated_at
from jsonb_to_recordset(?::jsonb) as ${CONTACT_RECORD}
where c.id = v.id and c.organization_id = ?`;

/** The updates and their events in one round trip: a data-modifying CTE runs whether or not it is read. */
export const UPDATE_CONTACTS_AND_EMIT = `with updated as (${UPDATE_CONTACTS}) ${INSERT_EVENTS_SQL}`;

/**
 * The single upsert's statements, no transaction around them. The first matches the email (unlocked, with the row
 * version, xmin) and, when nothing matches, inserts the new contact and its event in the same statement: one row back,
 * the match's columns or, for a new contact, only `inserted_id` (null when another request created the email first).
 * The second, for a match, writes the contact and its event only if the row is still the version read, and returns
 * the event's id when it wrote.
 */
export const MATCH_OR_INSERT_AND_EMIT = `
with m as (
  select ${CONTACT_COLUMNS}, ${HAS_BOOKING}, c.xmin::text as version from contacts c
  where organization_id = ? and email = ? and deleted_at is null
), written as (
  ${INSERT_CONTACTS.replace('on conflict', 'where not exists (select 1 from m) on conflict')}
), emitted as (
  ${INSERT_EVENTS_SQL} where exists (select 1 from written)
)
select ${CONTACT_COLUMNS}, c.has_booking, c.version, (select id from written) as inserted_id from (select 1) one left join m c on true`;
export const UPDATE_ONE_IF_UNCHANGED_AND_EMIT = `with written as (${UPDATE_CONTACTS} and c.xmin = ?::text::xid returning c.id) ${INSERT_EVENTS_SQL} where exists (select 1 from written) returning id`;

export const FIND_BY_EMAIL = `select ${CONTACT_COLUMNS} from contacts c where organization_id = ? and email = ? and deleted_at is null limit 1`;
