import type { Db } from '@leadwire/db';
import { scoreOf } from '../contacts/shared/apply.ts';
import { contactColumns } from '../contacts/shared/columns.ts';
import { type ContactRow, toEventContact } from '../contacts/shared/row.ts';
import { emitEvents } from '../events/outbox.ts';

const HAS_CONFIRMED = `select exists (select 1 from bookings where contact_id = ? and status = 'confirmed') as has`;
const STORE_SCORE = `update contacts set lead_score = ?, updated_at = ? where id = ? returning ${contactColumns()}`;

/**
 * Recomputes the score of `contact` (locked FOR UPDATE by the caller, so concurrent bookings of one contact are
 * counted one after the other) from its confirmed bookings, stores it and emits contact.score_changed (source `app`)
 * when it moved. Runs in the caller's transaction, after the booking change it reflects.
 */
export async function rescoreForBookings(tx: Db, contact: ContactRow, now: Date): Promise<void> {
  const [row] = await tx.execute<{ has: boolean }[]>(HAS_CONFIRMED, [contact.id]);
  const score = scoreOf({ ...contact, has_booking: row?.has === true });
  if (score === contact.lead_score) return;
  const [stored] = await tx.execute<ContactRow[]>(STORE_SCORE, [score, now, contact.id]);
  await emitEvents(tx, [
    { orgId: contact.organization_id, event: 'contact.score_changed', source: 'app', data: { contact: toEventContact(stored!), previousScore: contact.lead_score }, at: now },
  ]);
}
