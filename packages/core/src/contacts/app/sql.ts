import { CONTACT_COLUMNS, CONTACT_INSERT, CONTACT_RECORD, CONTACT_UPDATE_SET } from '../shared/columns.ts';
import { HAS_BOOKING } from '../shared/sql.ts';

/**
 * Statements of the application's contact operations. Placeholders are `?`; lists travel as one JSON parameter.
 * Every statement names the organization, so an id from another organization behaves exactly like an unknown one.
 */

export const WITH_COMPANY = `
select ${CONTACT_COLUMNS}, ${HAS_BOOKING}, co.name as company_name, co.domain as company_domain
from contacts c left join companies co on co.id = c.company_id`;

export const GET_LIVE = `${WITH_COMPANY} where c.id = ? and c.organization_id = ? and c.deleted_at is null`;

/** Rows that a write rescores carry `has_booking`, which `scoreOf` reads (the booking bonus). */
export const LOCK_LIVE = `select ${CONTACT_COLUMNS}, ${HAS_BOOKING} from contacts c where c.id = ? and c.organization_id = ? and c.deleted_at is null for update of c`;

export const LOCK_ANY = `select ${CONTACT_COLUMNS}, ${HAS_BOOKING} from contacts c where c.id = ? and c.organization_id = ? for update of c`;

export const FIND_LIVE_EMAIL = `select id from contacts where organization_id = ? and email = ? and deleted_at is null and id <> ? limit 1`;

export const FIND_COMPANY = `select id from companies where id = ? and organization_id = ?`;

/** The partial unique index decides a race between two creates of one email: the loser inserts nothing. */
export const INSERT_CONTACT = `
insert into contacts (${CONTACT_INSERT.columns})
select ${CONTACT_INSERT.values}
from jsonb_to_record(?::jsonb) as ${CONTACT_RECORD}
on conflict (organization_id, email) where deleted_at is null and email is not null do nothing
returning id`;

/** Writes every column a user can change; source and created_at never change after creation. */
export const WRITE_CONTACT = `
update contacts c set ${CONTACT_UPDATE_SET}
from jsonb_to_record(?::jsonb) as ${CONTACT_RECORD}
where c.id = v.id and c.organization_id = ?`;

export const TRASH = `update contacts set deleted_at = ?, updated_at = ? where id = ?`;
export const UNTRASH = `update contacts set deleted_at = null, updated_at = ? where id = ?`;
