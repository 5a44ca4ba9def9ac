import { qb, sql, statement, type Db } from '@leadwire/db';
import type { Actor } from '../../auth/actor.ts';
import { errors } from '../../errors.ts';
import { afterStart, positionOf, startOf, type SyncPageInput, toSyncPage } from '../../records/sync-page.ts';
import { EVENT_CONTACT_COLUMNS, toEventContact } from '../shared/row.ts';
import { consentStateOf, toContactConsent } from '../../consent/state.ts';
import type { ContactDetail } from './schemas.ts';

/** Only what the answer holds: `custom` alone can be megabytes a page. */
const COLUMNS = EVENT_CONTACT_COLUMNS.map((c) => `c.${c}` as const);

/**
 * Live contacts in (updated_at, id) order from a start, walking contacts_org_updated_live_idx: the index holds only
 * live contacts in this order, so a page reads its own rows and never sorts (test/db/sync-list-plans.test.ts).
 */
export const LIST_CONTACTS = statement<{ orgId: string; afterTs: string; afterId: string; limit: number }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(COLUMNS)
    .select((eb) => positionOf(eb.ref('c.updated_at')).as('position'))
    .where('c.organization_id', '=', p.orgId)
    .where('c.deleted_at', 'is', null)
    .where((eb) => afterStart(eb.ref('c.updated_at'), eb.ref('c.id'), p.afterTs, p.afterId))
    .orderBy('c.updated_at')
    .orderBy('c.id')
    .limit(p.limit),
);

export const FIND_CONTACT = statement<{ orgId: string; id: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(COLUMNS)
    .select((eb) => consentStateOf(eb.ref('c.id'), eb.ref('c.organization_id')).as('consent'))
    .where('c.organization_id', '=', p.orgId)
    .where('c.id', '=', p.id)
    .where('c.deleted_at', 'is', null)
    .limit(sql.lit(1)),
);

/** One page of the organization's live contacts, oldest change first; each item is a contact event's `data.contact`. */
export async function listContactRecords(db: Db, actor: Actor, input: SyncPageInput) {
  const start = startOf(input, 'contacts');
  const rows = await db.run(LIST_CONTACTS, { orgId: actor.orgId, ...start, limit: input.limit + 1 });
  return toSyncPage('contacts', rows, input.limit, toEventContact);
}

/**
 * A live contact of the organization with its consent, read by one statement; unknown, foreign and trashed ids are all
 * simply not found. Pages leave consent out: recording it does not change `updatedAt`, so a sync by `updatedSince`
 * would keep a stale copy, and contact events do not carry it either.
 */
export async function getContactRecord(db: Db, actor: Actor, id: string, now: Date): Promise<ContactDetail> {
  const [row] = await db.run(FIND_CONTACT, { orgId: actor.orgId, id });
  if (!row) throw errors.notFound(`No contact with id ${id}`);
  return { ...toEventContact(row), consent: toContactConsent(row.consent, now) };
}
