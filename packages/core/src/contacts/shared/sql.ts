import { CONTACT_INSERT, CONTACT_RECORD, CONTACT_UPDATE_SET } from './columns.ts';

/** Statements both the public API and the application run on contacts. Placeholders are `?`; rows travel as
 * one JSON array parameter, so a single write and a batch run the same prepared statement. */

/** The booking bonus input of the score, read alongside every contact the upsert may rescore. */
export const HAS_BOOKING = `exists (select 1 from bookings b where b.contact_id = c.id and b.status = 'confirmed') as has_booking`;

/** The organization's contact counter, read without a lock: far from the cap that is all admission needs. */
export const READ_CONTACT_COUNT = `select contact_count from contact_counters where organization_id = ?`;

/** Near the cap, the counter row is locked: new contacts are then admitted one transaction at a time against it. */
export const LOCK_CONTACT_COUNT = `select contact_count from contact_counters where organization_id = ? for update`;

export const BUMP_CONTACT_COUNT = `update contact_counters set contact_count = contact_count + ? where organization_id = ?`;

/** The partial unique index decides a race between two creates of one email: the loser inserts nothing. */
export const INSERT_CONTACTS = `
insert into contacts (${CONTACT_INSERT.columns})
select ${CONTACT_INSERT.values}
from jsonb_to_recordset(?::jsonb) as ${CONTACT_RECORD}
on conflict (organization_id, email) where deleted_at is null and email is not null do nothing
returning id`;

/**
 * Sets every written column: each row was read under its lock, so a column the write does not change is written back as
 * it was. The rows are found by primary key only: a generic plan takes `jsonb_to_recordset` for 100 rows and the
 * organization for an average one, so it would join through, or AND in, a scan of the organization's contacts, linear
 * in a large organization's size on every write. Hence the ids again as an array (the one index path), and the
 * organization compared as text: still checked on every row, but never an index condition. Parameters:
 * `updateContactsParams`.
 */
export const UPDATE_CONTACTS = `
update contacts c set ${CONTACT_UPDATE_SET}
from jsonb_to_recordset(?::jsonb) as ${CONTACT_RECORD}
where c.id = any(?::uuid[]) and c.id = v.id and c.organization_id::text = ?::uuid::text`;

/** UPDATE_CONTACTS's parameters for rows of one organization. */
export const updateContactsParams = (rows: readonly { id: string }[], orgId: string): unknown[] => [JSON.stringify(rows), rows.map((r) => r.id), orgId];

