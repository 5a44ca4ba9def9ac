import type { Db } from '@leadwire/db';
import { errors } from '../errors.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import type { ConsentEntryView, ContactConsents } from './schemas.ts';
import * as q from './sql.ts';

/** Entries shown at most: a person answers a few questions a year; this bounds a page, not a history. */
export const ENTRIES_SHOWN = 200;

const toView = (r: q.EntryRow, now: Date): ConsentEntryView => ({
  id: r.id,
  purpose: r.purpose,
  status: r.status,
  expired: r.status === 'pending' && r.expires_at !== null && new Date(r.expires_at).getTime() <= now.getTime(),
  method: r.method,
  text: r.text,
  version: r.version,
  formId: r.form_id,
  formName: r.form_name,
  pageUrl: r.page_url,
  ipHash: r.ip_hash,
  confirms: r.confirms,
  expiresAt: isoOrNull(r.expires_at),
  at: iso(r.created_at),
});

/**
 * A live contact's consent: each purpose as its latest grant or withdrawal decides it, and every entry, newest first.
 * Read-only on every surface; 404 for a contact that is not the organization's or is in the trash.
 */
export async function contactConsents(db: Db, orgId: string, contactId: string, now: Date): Promise<ContactConsents> {
  const [contact] = await db.run(q.CONTACT, { orgId, contactId });
  if (!contact) throw errors.notFound(`No contact with id ${contactId}`);
  const [deciding, entries] = await Promise.all([
    db.run(q.DECIDING, { orgId, contactId }),
    db.run(q.ENTRIES_OF, { orgId, contactId, limit: ENTRIES_SHOWN }),
  ]);
  return {
    purposes: deciding.map((r) => ({
      purpose: r.purpose,
      granted: r.status === 'granted',
      since: iso(r.created_at),
      method: r.method,
      text: r.text,
      version: r.version,
    })),
    entries: entries.map((r) => toView(r, now)),
  };
}
