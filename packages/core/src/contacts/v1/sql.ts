import { INSERT_EVENTS_SQL } from '../../events/outbox.ts';
import { CONTACT_COLUMNS } from '../shared/columns.ts';
import { HAS_BOOKING, INSERT_CONTACTS, UPDATE_CONTACTS } from '../shared/sql.ts';

export { BUMP_CONTACT_COUNT, INSERT_CONTACTS, LOCK_CONTACT_COUNT, READ_CONTACT_COUNT } from '../shared/sql.ts';

/**
 * Every statement of the contact upsert path, in one place. Placeholders are `?`. Lists travel as one JSON parameter
 * (one statement text and one parameter type whatever the batch size, so each is prepared once).
 */

/**
 * Lists travel as JSON and are matched with `= any(array(...))`: an index condition on the organization's unique key,
 * never a scan of all its rows (a generic plan takes a set-returning function for 100 rows and the organization for an
 * average one, and with `in (select ...)` could choose to filter every row of a large organization).
 */
export const FIND_COMPANIES = `select id, domain from companies where organization_id = ? and domain = any(array(select jsonb_array_elements_text(?::jsonb)))`;

/**
 * Name matching has no unique index to lean on, so concurrent upserts of one name at one company serialise on an
 * advisory lock per identity; keys are sorted so two batches never wait on each other in a cycle.
 */
export const LOCK_IDENTITIES = `select pg_advisory_xact_lock(hashtextextended(k, 0)) from (select k from jsonb_array_elements_text(?::jsonb) as k order by k) s`;

/** Rows are locked in id order so concurrent batches touching the same contacts cannot deadlock. */
export const MATCH_BY_EMAIL = `select ${CONTACT_COLUMNS}, ${HAS_BOOKING} from contacts c where organization_id = ? and email = any(array(select jsonb_array_elements_text(?::jsonb))) and deleted_at is null order by id for update`;

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

/** The updates and their events in one round trip: a data-modifying CTE runs whether or not it is read. */
export const UPDATE_CONTACTS_AND_EMIT = `with updated as (${UPDATE_CONTACTS}) ${INSERT_EVENTS_SQL}`;

/**
 * The single upsert's statements, no transaction around them. The first matches the email (unlocked, with the row
 * version, xmin) and, when nothing matches, inserts the new contact and its event in the same statement: one row back,
 * the match's columns or, for a new contact, only `inserted_id` (null when another request created the email first).
 * A new contact also bumps the organization's counter there: the bump reads `written`, so it runs after the insert and
 * the counter row is locked only from then until this statement commits, never while the insert waits on a
 * concurrent create of the same email (no lock cycle).
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
), counted as (
  update contact_counters set contact_count = contact_count + 1 where organization_id = ? and exists (select 1 from written)
)
select ${CONTACT_COLUMNS}, c.has_booking, c.version, (select id from written) as inserted_id from (select 1) one left join m c on true`;
export const UPDATE_ONE_IF_UNCHANGED_AND_EMIT = `with written as (${UPDATE_CONTACTS} and c.xmin = ?::text::xid returning c.id) ${INSERT_EVENTS_SQL} where exists (select 1 from written) returning id`;

export const FIND_BY_EMAIL = `select ${CONTACT_COLUMNS} from contacts c where organization_id = ? and email = ? and deleted_at is null limit 1`;
