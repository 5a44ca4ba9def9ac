import { qb, sql, statement } from '@leadwire/db';
import { SCORED_CONTACT } from '../shared/sql.ts';
import { consentStateOf } from '../../consent/state.ts';

/**
 * Statements of the application's contact operations, each built once. Every statement names the organization, so an
 * id from another organization behaves exactly like an unknown one.
 */

/** A contact with its company, when it has one. */
export const withCompany = () =>
  qb
    .selectFrom('contacts as c')
    .leftJoin('companies as co', 'co.id', 'c.company_id')
    .select([...SCORED_CONTACT, 'co.name as company_name', 'co.domain as company_domain']);

export const GET_LIVE = statement<{ id: string; orgId: string }>()((p) =>
  withCompany().where('c.id', '=', p.id).where('c.organization_id', '=', p.orgId).where('c.deleted_at', 'is', null),
);

/** The contact read (contacts.get): the contact and its consent in one statement, so one snapshot. */
export const GET_LIVE_DETAIL = statement<{ id: string; orgId: string }>()((p) =>
  withCompany()
    .select((eb) => consentStateOf(eb.ref('c.id'), eb.ref('c.organization_id')).as('consent'))
    .where('c.id', '=', p.id)
    .where('c.organization_id', '=', p.orgId)
    .where('c.deleted_at', 'is', null),
);

/** Rows that a write rescores carry `has_booking`, which `scoreOf` reads (the booking bonus). */
export const LOCK_LIVE = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(SCORED_CONTACT)
    .where('c.id', '=', p.id)
    .where('c.organization_id', '=', p.orgId)
    .where('c.deleted_at', 'is', null)
    .forUpdate('c'),
);

export const LOCK_ANY = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('contacts as c').select(SCORED_CONTACT).where('c.id', '=', p.id).where('c.organization_id', '=', p.orgId).forUpdate('c'),
);

export const FIND_LIVE_EMAIL = statement<{ orgId: string; email: string; selfId: string }>()((p) =>
  qb
    .selectFrom('contacts')
    .select('id')
    .where('organization_id', '=', p.orgId)
    .where('email', '=', p.email)
    .where('deleted_at', 'is', null)
    .where('id', '<>', p.selfId)
    .limit(sql.lit(1)),
);

export const FIND_COMPANY = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('companies').select('id').where('id', '=', p.id).where('organization_id', '=', p.orgId),
);

export const TRASH = statement<{ now: Date; id: string }>()((p) =>
  qb.updateTable('contacts').set({ deleted_at: p.now, updated_at: p.now }).where('id', '=', p.id),
);

export const UNTRASH = statement<{ now: Date; id: string }>()((p) =>
  qb
    .updateTable('contacts')
    .set({ deleted_at: sql.lit(null), updated_at: p.now })
    .where('id', '=', p.id),
);
