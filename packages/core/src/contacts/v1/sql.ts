import { INSERT_EVENTS_SQL } from '../../events/outbox.ts';
import { CONTACT_COLUMNS, CONTACT_INSERT, CONTACT_RECORD, CONTACT_UPDATE_SET } from '../shared/columns.ts';
import { HAS_BOOKING } from '../shared/sql.ts';

export { BUMP_CONTACT_COUNT, LOCK_CONTACT_COUNT, READ_CONTACT_COUNT } from '../shared/sql.ts';

/**
 * Every statement of the contact upsert path, in one place. Placeholders are `?`. Lists travel as one JSON parameter
 * (one statement text and one parameter type whatever the batch size, so each is prepared once).
 */

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

export const INSERT_CONTACTS = `
insert into contacts (${CONTACT_INSERT.columns})
select ${CONTACT_INSERT.values}
from jsonb_to_recordset(?::jsonb) as ${CONTACT_RECORD}
on conflict (organization_id, email) where deleted_at is null and email is not null do nothing
returning id`;

/** Sets every written column: each row was read under its lock, so a column the upsert does not change is written back as it was. */
export const UPDATE_CONTACTS = `
update contacts c set ${CONTACT_UPDATE_SET}
from jsonb_to_recordset(?::jsonb) as ${CONTACT_RECORD}
where c.id = v.id and c.organization_id = ?`;

/** The updates and their events in one round trip: a data-modifying CTE runs whether or not it is read. */
export const UPDATE_CONTACTS_AND_EMIT = `with updated as (${UPDATE_CONTACTS}) ${INSERT_EVENTS_SQL}`;

export const FIND_BY_EMAIL = `select ${CONTACT_COLUMNS} from contacts c where organization_id = ? and email = ? and deleted_at is null limit 1`;
