import { internalProcedure } from '../auth/internal.ts';
import { publicApiProcedure } from '../auth/procedures.ts';
import { AUTH_ERRORS, INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { contactConsents } from './read.ts';
import { ContactConsents, ContactIdInput } from './schemas.ts';

/** Both surfaces serve the same operation at the same path below their base. */
const openapi = {
  method: 'GET' as const,
  path: '/contacts/{id}/consents' as const,
  tags: ['Contacts'],
  summary: "A contact's consent: what holds now and every entry",
  description:
    'Read-only: consent is recorded only by forms (their consent checkboxes), their double opt-in confirmation pages and unsubscribe links, never through an API key. `purposes` says what holds now; `entries` is the evidence, newest first.',
};

/** `GET /api/contacts/{id}/consents`: a contact's consent record (any member, as the contact itself). */
export const consentsRouter = router({
  ofContact: internalProcedure
    .meta({
      openapi,
      errorCodes: [...INTERNAL_ERRORS, 'not_found'],
    })
    .input(ContactIdInput)
    .output(ContactConsents)
    .query(({ ctx, input }) => contactConsents(ctx.db, ctx.actor.orgId, input.id, ctx.deps.clock.now())),
});

/** `GET /v1/contacts/{id}/consents`: the same record, read with `contacts:read`. */
export const consentsV1Router = router({
  ofContact: publicApiProcedure('contacts:read')
    .meta({
      openapi,
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'not_found'],
    })
    .input(ContactIdInput)
    .output(ContactConsents)
    .query(({ ctx, input }) => contactConsents(ctx.db, ctx.actor.orgId, input.id, ctx.deps.clock.now())),
});
