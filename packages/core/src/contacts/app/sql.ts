import { CONTACT_COLUMNS } from '../shared/columns.ts';
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

export const TRASH = `update contacts set deleted_at = ?, updated_at = ? where id = ?`;
export const UNTRASH = `update contacts set deleted_at = null, updated_at = ? where id = ?`;
