import { qb, sql, statement, type Db } from '@leadwire/db';
import { scoreOf } from '../contacts/shared/apply.ts';
import { CONTACT_COLUMN_NAMES } from '../contacts/shared/columns.ts';
import { type ContactRow, toEventContact } from '../contacts/shared/row.ts';
import { emitEvents } from '../events/outbox.ts';

const HAS_CONFIRMED = statement<{ contactId: string }>()((p) =>
  qb.selectNoFrom((eb) =>
    eb
      .exists(
        eb
          .selectFrom('bookings')
          .select(eb.lit(1).as('one'))
          .where('contact_id', '=', p.contactId)
          .where('status', '=', sql.lit('confirmed')),
      )
      .as('has'),
  ),
);
const STORE_SCORE = statement<{ score: number; now: Date; id: string }>()((p) =>
  qb.updateTable('contacts').set({ lead_score: p.score, updated_at: p.now }).where('id', '=', p.id).returning(CONTACT_COLUMN_NAMES),
);

/**
 * Recomputes the score of `contact` (locked FOR UPDATE by the caller, so concurrent bookings of one contact are
 * counted one after the other) from its confirmed bookings, stores it and emits contact.score_changed (source `app`)
 * when it moved. Runs in the caller's transaction, after the booking change it reflects.
 */
export async function rescoreForBookings(tx: Db, contact: ContactRow, now: Date): Promise<void> {
  const [row] = await tx.run(HAS_CONFIRMED, { contactId: contact.id });
  const score = scoreOf({ ...contact, has_booking: row?.has === true });
  if (score === contact.lead_score) return;
  const [stored] = await tx.run(STORE_SCORE, { score, now, id: contact.id });
  await emitEvents(tx, [
    {
      orgId: contact.organization_id,
      event: 'contact.score_changed',
      source: 'app',
      data: { contact: toEventContact(stored!), previousScore: contact.lead_score },
      at: now,
    },
  ]);
}
