
import { publicApiMutation, publicApiProcedure } from '../auth/procedures.ts';
import type { RequestContext } from '../context.ts';
import { errors, issuesFromZod } from '../errors.ts';
import { router } from '../trpc.ts';
import { batchUpsertContacts } from './batch.ts';
import {
  BatchUpsertInput,
  BatchUpsertOutput,
  ContactSearchInput,
  ContactUpsertInput,
  ContactUpsertOutput,
  ContactView,
  SourceSchema,
} from './schemas.ts';
import { searchContactByEmail } from './search.ts';
import { upsertContact, type UpsertOptions } from './upsert.ts';

const AUTH_ERRORS = ['unauthorized', 'wrong_api_surface', 'insufficient_scope', 'rate_limited'] as const;
export const WRITE_ERRORS = [...AUTH_ERRORS, 'validation_failed', 'idempotency_key_reused', 'idempotency_in_progress'] as const;

/** X-Source applies when the body carries no `source`: the body is the more specific of the two. */
export function upsertOptions(ctx: RequestContext): UpsertOptions {
  const header = ctx.header('x-source');
  if (header !== undefined) {
    const parsed = SourceSchema.safeParse(header);
    if (!parsed.success) throw errors.validation(issuesFromZod(parsed.error.issues).map((i) => ({ ...i, path: 'X-Source' })), `X-Source: ${parsed.error.issues[0]?.message}`);
  }
  return {
    headerSource: header,
    eventSource: 'api',
    onScoreInputsChanged: ctx.deps.scoreAdjustment
      ? (tx, ids) => ctx.deps.jobs.send(tx, 'contact.adjust-score', { contactIds: ids })
      : undefined,
  };
}

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


