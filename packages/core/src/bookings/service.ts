import { randomUUID } from 'node:crypto';
import { columnList, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { afterCursor, toPage } from '../records/pagination.ts';
import { errors } from '../errors.ts';
import { emitEvents } from '../events/outbox.ts';
import type { BookingCreateInput, BookingListInput, BookingView } from './schemas.ts';
import { rescoreForBookings } from './score.ts';

interface BookingRow {
  id: string;
  contact_id: string;
  title: string | null;
  starts_at: Date;
  ends_at: Date;
  status: BookingView['status'];
  cancelled_at: Date | null;
  created_at: Date;
}

const COLUMNS = ['id', 'created_at', 'organization_id', 'contact_id', 'title', 'starts_at', 'ends_at', 'status', 'cancelled_at'];

/** Bookings of a trashed contact are hidden with it. */
const VISIBLE = `from bookings b join contacts c on c.id = b.contact_id and c.deleted_at is null where b.organization_id = ?`;
const GET = `select ${columnList(COLUMNS, 'b')} ${VISIBLE} and b.id = ?`;
const LIST = `
select ${columnList(COLUMNS, 'b')} ${VISIBLE}
  and (?::uuid is null or b.contact_id = ?) and (?::text is null or b.status = ?)
  and ${afterCursor('b', 'bookings')}
order by b.created_at desc, b.id desc
limit ?`;
const INSERT = `
insert into bookings (id, organization_id, contact_id, title, starts_at, ends_at, created_at) values (?, ?, ?, ?, ?, ?, ?)
returning ${columnList(COLUMNS)}`;
/** Only a confirmed booking is cancelled: a repeat (or concurrent) cancel changes nothing and emits nothing. */
const CANCEL = `update bookings set status = 'cancelled', cancelled_at = ? where id = ? and status = 'confirmed' returning ${columnList(COLUMNS)}`;

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

export async function listBookings(db: Db, actor: InternalActor, q: BookingListInput) {
  const rows = await db.execute<BookingRow[]>(LIST, [
    actor.orgId,
    q.contactId ?? null, q.contactId ?? null,
    q.status ?? null, q.status ?? null,
    q.cursor ?? null, q.cursor ?? null, actor.orgId,
    q.limit + 1,
  ]);
  return toPage(rows, q.limit, toView);
}

export async function getBooking(db: Db, actor: InternalActor, id: string): Promise<BookingView> {
  const [row] = await db.execute<BookingRow[]>(GET, [actor.orgId, id]);
  if (!row) throw errors.notFound(`No booking with id ${id}`);
  return toView(row);
}

/** Emits booking.created (`data.booking`), and contact.score_changed when the booking bonus moved the score. */
export async function createBooking(db: Db, actor: InternalActor, input: BookingCreateInput, now: Date): Promise<BookingView> {
  return db.transaction(async (tx) => {
    const contact = await requireLiveContact(tx, actor.orgId, input.contactId, 'update');
    const [row] = await tx.execute<BookingRow[]>(INSERT, [
      randomUUID(),
      actor.orgId,
      contact.id,
      input.title ?? null,
      input.startsAt,
      input.endsAt,
      now,
    ]);
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
    const [row] = await tx.execute<BookingRow[]>(CANCEL, [now, id]);
    if (!row) return getBooking(tx, actor, id);
    const booking = toView(row);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'booking.cancelled', source: 'app', data: { booking }, at: now }]);
    await rescoreForBookings(tx, contact, now);
    return booking;
  });
}
