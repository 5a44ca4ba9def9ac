import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type DB, type Db } from '@leadwire/db';
import type { Selectable } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { newestFirst, type PageParams } from '../records/pagination.ts';
import { getRecord, ifGiven, listRecords, qualified, type ById } from '../records/query.ts';
import { emitEvents } from '../events/outbox.ts';
import type { BookingCreateInput, BookingListInput, BookingView } from './schemas.ts';
import { rescoreForBookings } from './score.ts';

/** What a booking's view is made of; the insert and the cancel return the same columns the reads select. */
const BOOKING_COLUMNS = ['id', 'created_at', 'contact_id', 'title', 'starts_at', 'ends_at', 'status', 'cancelled_at'] as const;
type BookingRow = Pick<Selectable<DB['bookings']>, (typeof BOOKING_COLUMNS)[number]>;

/** Bookings of a trashed contact are hidden with it. */
const visible = (orgId: string) =>
  qb
    .selectFrom('bookings as b')
    .innerJoin('contacts as c', (j) => j.onRef('c.id', '=', 'b.contact_id').on('c.deleted_at', 'is', null))
    .where('b.organization_id', '=', orgId)
    .select(qualified('b', BOOKING_COLUMNS));

const GET = statement<ById>()((p) => visible(p.orgId).where('b.id', '=', p.id));

interface BookingFilters {
  contactId: string | null;
  status: BookingView['status'] | null;
}
const LIST = statement<BookingFilters & PageParams>()((p) =>
  newestFirst(
    visible(p.orgId).where((eb) =>
      eb.and([
        ifGiven(eb, p.contactId, 'uuid', eb('b.contact_id', '=', p.contactId)),
        ifGiven(eb, p.status, 'text', eb('b.status', '=', p.status)),
      ]),
    ),
    'bookings',
    'b',
    p,
  ),
);
interface NewBooking {
  id: string;
  orgId: string;
  contactId: string;
  title: string | null;
  /** As sent: ISO text, read by PostgreSQL at full precision rather than rounded through a Date. */
  startsAt: string;
  endsAt: string;
  now: Date;
}
const INSERT = statement<NewBooking>()((p) =>
  qb
    .insertInto('bookings')
    .values({
      id: p.id,
      organization_id: p.orgId,
      contact_id: p.contactId,
      title: p.title,
      starts_at: sql<Date>`${p.startsAt}::timestamptz`,
      ends_at: sql<Date>`${p.endsAt}::timestamptz`,
      created_at: p.now,
    })
    .returning(BOOKING_COLUMNS),
);
/** Only a confirmed booking is cancelled: a repeat (or concurrent) cancel changes nothing and emits nothing. */
const CANCEL = statement<{ now: Date; id: string }>()((p) =>
  qb
    .updateTable('bookings')
    .set({ status: sql.lit('cancelled'), cancelled_at: p.now })
    .where('id', '=', p.id)
    .where('status', '=', sql.lit('confirmed'))
    .returning(BOOKING_COLUMNS),
);

const toView = (r: BookingRow): BookingView => ({
  id: r.id,
  contactId: r.contact_id,
  title: r.title,
  startsAt: iso(r.starts_at),
  endsAt: iso(r.ends_at),
  status: r.status,
  cancelledAt: isoOrNull(r.cancelled_at),
  createdAt: iso(r.created_at),
});

export function listBookings(db: Db, actor: InternalActor, q: BookingListInput) {
  return listRecords(db, 'bookings', LIST, actor.orgId, q, { contactId: q.contactId ?? null, status: q.status ?? null }, toView);
}

export function getBooking(db: Db, actor: InternalActor, id: string): Promise<BookingView> {
  return getRecord(db, GET, actor.orgId, id, 'booking', toView);
}

/** Emits booking.created (`data.booking`), and contact.score_changed when the booking bonus moved the score. */
export async function createBooking(db: Db, actor: InternalActor, input: BookingCreateInput, now: Date): Promise<BookingView> {
  return db.transaction(async (tx) => {
    const contact = await requireLiveContact(tx, actor.orgId, input.contactId, 'update');
    const [row] = await tx.run(INSERT, {
      id: randomUUID(),
      orgId: actor.orgId,
      contactId: contact.id,
      title: input.title ?? null,
      startsAt: input.startsAt,
      endsAt: input.endsAt,
      now,
    });
    const booking = toView(row!);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'booking.created', source: 'app', data: { booking }, at: now }]);
    await rescoreForBookings(tx, contact, now);
    return booking;
  });
}

/**
 * Emits booking.cancelled once; cancelling the contact's last confirmed booking takes the booking bonus away again.
 * The contact is locked before the booking, in the same order as createBooking.
 */
export async function cancelBooking(db: Db, actor: InternalActor, id: string, now: Date): Promise<BookingView> {
  return db.transaction(async (tx) => {
    const current = await getBooking(tx, actor, id);
    const contact = await requireLiveContact(tx, actor.orgId, current.contactId, 'update');
    const [row] = await tx.run(CANCEL, { now, id });
    if (!row) return getBooking(tx, actor, id);
    const booking = toView(row);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'booking.cancelled', source: 'app', data: { booking }, at: now }]);
    await rescoreForBookings(tx, contact, now);
    return booking;
  });
}
