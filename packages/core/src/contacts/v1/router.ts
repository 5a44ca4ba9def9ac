import { publicApiMutation, publicApiProcedure } from '../../auth/procedures.ts';
import { router } from '../../trpc.ts';
import { AUTH_ERRORS, WRITE_ERRORS } from '../../errors/surfaces.ts';
import { upsertOptions } from './options.ts';
import { batchUpsertContacts } from './batch.ts';
import {
  BatchUpsertInput,
  BatchUpsertOutput,
  ContactIdInput,
  ContactListInput,
  ContactDetail,
  ContactRecordPage,
  ContactSearchInput,
  ContactUpsertInput,
  ContactUpsertOutput,
  ContactView,
} from './schemas.ts';
import { getContactRecord, listContactRecords } from './read.ts';
import { searchContactByEmail } from './search.ts';
import { upsertContact } from './upsert.ts';

export const contactsRouter = router({
  list: publicApiProcedure('contacts:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts',
        tags: ['Contacts'],
        summary: 'List contacts, oldest change first, to sync or reconcile',
        description:
          'Live contacts in `updatedAt` then `id` order, in cursor pages. A contact changed while you page moves to the end and is listed again: de-duplicate on `id`, keeping the latest `updatedAt`. To sync again later, pass `updatedSince` a minute before the greatest `updatedAt` you saw (see Reading and reconciling). Trashed and deleted contacts are not listed (their `contact.deleted` events are in GET /v1/events). Unknown query parameters are refused with 400.',
      },
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'invalid_cursor'],
    })
    .input(ContactListInput)
    .output(ContactRecordPage)
    .query(({ ctx, input }) => listContactRecords(ctx.db, ctx.actor, input)),

  search: publicApiProcedure('contacts:read')
    .meta({
      openapi: { method: 'GET', path: '/contacts/search', tags: ['Contacts'], summary: 'Find a contact by email' },
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'not_found'],
    })
    .input(ContactSearchInput)
    .output(ContactView)
    .query(({ ctx, input }) => searchContactByEmail(ctx.db, ctx.actor, input.email)),

  // After `search`: `/contacts/search` must reach the search, not be read as the id "search".
  get: publicApiProcedure('contacts:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/{id}',
        tags: ['Contacts'],
        summary: 'Get a contact by id, with its consent',
        description:
          'The contact as contact events carry it, plus `consent`: per purpose, what holds now (read-only; no API key sets it). Its evidence, entry by entry: GET /v1/contacts/{id}/consents.',
      },
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'not_found'],
    })
    .input(ContactIdInput)
    .output(ContactDetail)
    .query(({ ctx, input }) => getContactRecord(ctx.db, ctx.actor, input.id, ctx.deps.clock.now())),

  upsert: publicApiMutation('contacts:write', { oneTrip: true })
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/upsert',
        tags: ['Contacts'],
        summary: 'Create or update a contact, matched on email or on name at a company domain',
      },
      errorCodes: [...WRITE_ERRORS, 'missing_identity', 'company_not_found', 'contact_limit_reached', 'save_failed'],
    })
    .input(ContactUpsertInput)
    .output(ContactUpsertOutput)
    .mutation(async ({ ctx, input }) => {
      const { id, created, matchedBy } = await upsertContact(ctx.db, ctx.actor, input, upsertOptions(ctx));
      return { id, created, matchedBy };
    }),

  batchUpsert: publicApiMutation('contacts:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/batch-upsert',
        tags: ['Contacts'],
        summary: 'Upsert up to 100 contacts; each row succeeds or fails on its own',
      },
      errorCodes: [...WRITE_ERRORS, 'save_failed'],
    })
    .input(BatchUpsertInput)
    .output(BatchUpsertOutput)
    .mutation(({ ctx, input }) => batchUpsertContacts(ctx.db, ctx.actor, input.contacts, upsertOptions(ctx))),
});
