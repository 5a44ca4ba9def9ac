import { z } from 'zod';
import { text } from '../validation/index.ts';
import { IsoDateTime } from '../records/dates.ts';
import { PageFields, pageOf } from '../records/pagination.ts';

export const BOOKING_STATUSES = ['confirmed', 'cancelled'] as const;

const At = (name: string) =>
  z.iso.datetime({ offset: true, message: `${name} must be an ISO 8601 date-time` }).meta({ example: '2026-12-01T09:00:00Z' });

export const BookingView = z.object({
  id: z.uuid(),
  contactId: z.uuid(),
  title: z.string().nullable(),
  startsAt: IsoDateTime,
  endsAt: IsoDateTime,
  status: z.enum(BOOKING_STATUSES),
  cancelledAt: IsoDateTime.nullable(),
  createdAt: IsoDateTime,
});
export type BookingView = z.infer<typeof BookingView>;

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
