import { z } from 'zod';
import { text } from '../validation/index.ts';
import { PageFields, pageOf } from '../records/pagination.ts';
import { BOOKING_STATUSES, BookingView } from '../events/records.ts';

// The record's wire shape is the event payload's too, so it is defined once, below the resources, in events/.
export { BOOKING_STATUSES, BookingView };

const At = (name: string) =>
  z.iso.datetime({ offset: true, message: `${name} must be an ISO 8601 date-time` }).meta({ example: '2026-12-01T09:00:00Z' });

export const BookingCreateInput = z
  .object({
    contactId: z.uuid({ message: 'contactId must be a contact id (UUID)' }),
    title: text(300).min(1).nullish(),
    startsAt: At('startsAt'),
    endsAt: At('endsAt'),
  })
  .refine((b) => Date.parse(b.endsAt) > Date.parse(b.startsAt), { message: 'endsAt must be after startsAt', path: ['endsAt'] });
export type BookingCreateInput = z.infer<typeof BookingCreateInput>;

export const BookingIdInput = z.object({ id: z.uuid({ message: 'id must be a booking id (UUID)' }) });

export const BookingListInput = z.object({
  contactId: z.uuid().optional(),
  status: z.enum(BOOKING_STATUSES).optional(),
  ...PageFields,
});
export type BookingListInput = z.infer<typeof BookingListInput>;

export const BookingPage = pageOf(BookingView);
