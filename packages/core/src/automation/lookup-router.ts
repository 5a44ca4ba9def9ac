import { internalProcedure } from '../auth/internal.ts';
import { router } from '../trpc.ts';
import {
  CompanyChoices,
  CompanyChoicesInput,
  FindContactInput,
  FoundContacts,
  NoQuery,
  PipelineChoices,
  TagChoices,
} from './lookup-schemas.ts';
import { companyChoices, findContact, pipelineChoices, tagChoices } from './lookups.ts';
import { BASE, INPUT_ERRORS, tags } from './meta.ts';

const get = (path: `/${string}`, summary: string, description?: string) => ({
  openapi: { method: 'GET' as const, path: `${BASE}${path}` as const, tags, summary, ...(description ? { description } : {}) },
  // validation_failed: an unknown query parameter is refused, never ignored.
  errorCodes: INPUT_ERRORS,
});

/** The find-contact search of find-or-create. */
export const findContactProcedure = internalProcedure
  .meta(
    get(
      '/contacts/find',
      'Find the contact with an exact email (a list of 0 or 1), for find-or-create',
      'Matches the live contact whose email is exactly `email`, trimmed and case-insensitive. Nothing found is `[]`, not 404: a platform then runs `create_contact`.',
    ),
  )
  .input(FindContactInput)
  .output(FoundContacts)
  .query(({ ctx, input }) => findContact(ctx.db, ctx.actor, input.email));

/** The choices of the actions' dynamic dropdowns (GET .../actions names which input each one feeds). */
export const dropdownRouter = router({
  pipelines: internalProcedure
    .meta(get('/dropdowns/pipelines', 'Pipelines with their stages, for create_deal.pipelineId'))
    .input(NoQuery)
    .output(PipelineChoices)
    .query(({ ctx }) => pipelineChoices(ctx.db, ctx.actor)),
  tags: internalProcedure
    .meta(get('/dropdowns/tags', "Tags the organization's contacts carry, most used first, for the tags inputs"))
    .input(NoQuery)
    .output(TagChoices)
    .query(({ ctx }) => tagChoices(ctx.db, ctx.actor)),
  companies: internalProcedure
    .meta(get('/dropdowns/companies', 'Companies in domain order, a page at a time, for the company inputs'))
    .input(CompanyChoicesInput)
    .output(CompanyChoices)
    .query(({ ctx, input }) => companyChoices(ctx.db, ctx.actor, input)),
});
