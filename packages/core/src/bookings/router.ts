import { internalProcedure } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { BookingCreateInput, BookingIdInput, BookingListInput, BookingPage, BookingView } from './schemas.ts';
import { cancelBooking, createBooking, getBooking, listBookings } from './service.ts';

const tags = ['Bookings'];

/** Every member books and cancels. */
export const bookingsRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/bookings', tags, summary: 'Bookings, newest first, filtered by contact or status' },
      errorCodes: [...INTERNAL_ERRORS, 'invalid_cursor'],
    })
    .input(BookingListInput)
    .output(BookingPage)
    .query(({ ctx, input }) => listBookings(ctx.db, ctx.actor, input)),

  get: internalProcedure
    .meta({ openapi: { method: 'GET', path: '/bookings/{id}', tags, summary: 'A booking' }, errorCodes: [...INTERNAL_ERRORS, 'not_found'] })
    .input(BookingIdInput)
    .output(BookingView)
    .query(({ ctx, input }) => getBooking(ctx.db, ctx.actor, input.id)),

  create: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/bookings',
        tags,
        summary: "Book a contact (emits booking.created; the contact's score gains the +20 booking bonus)",
      },
      successStatus: 201,
      errorCodes: [...INTERNAL_ERRORS, 'not_found'],
    })
    .input(BookingCreateInput)
    .output(BookingView)
    .mutation(({ ctx, input }) => createBooking(ctx.db, ctx.actor, input, ctx.deps.clock.now())),

  cancel: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/bookings/{id}/cancel',
        tags,
        summary: 'Cancel a booking (emits booking.cancelled once; the last one cancelled removes the booking bonus)',
      },
      errorCodes: [...INTERNAL_ERRORS, 'not_found'],
    })
    .input(BookingIdInput)
    .output(BookingView)
    .mutation(({ ctx, input }) => cancelBooking(ctx.db, ctx.actor, input.id, ctx.deps.clock.now())),
});
