import { publicApiMutation, publicApiProcedure } from '../../auth/procedures.ts';
import { router } from '../../trpc.ts';
import { AUTH_ERRORS, upsertOptions, WRITE_ERRORS } from '../../v1/shared.ts';
import { batchUpsertContacts } from './batch.ts';
import {
  BatchUpsertInput,
  BatchUpsertOutput,
  ContactSearchInput,
  ContactUpsertInput,
  ContactUpsertOutput,
  ContactView,
} from './schemas.ts';
import { searchContactByEmail } from './search.ts';
import { upsertContact } from './upsert.ts';

export const contactsRouter = router({
  search: publicApiProcedure('contacts:read')
    .meta({
      openapi: { method: 'GET', path: '/contacts/search', tags: ['Contacts'], summary: 'Find a contact by email' },
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'not_found'],
    })
    .input(ContactSearchInput)
    .output(ContactView)
    .query(({ ctx, input }) => searchContactByEmail(ctx.db, ctx.actor, input.email)),

  upsert: publicApiMutation('contacts:write')
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
