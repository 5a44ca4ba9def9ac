import { publicApiMutation, publicApiProcedure } from '../auth/procedures.ts';
import { AUTH_ERRORS, WRITE_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { findCompanyByDomain, getCompanyRecord, listCompanyRecords } from './read.ts';
import {
  CompanyIdInput,
  CompanyListInput,
  CompanyRecord,
  CompanyRecordPage,
  CompanySearchInput,
  CompanyUpsertInput,
  CompanyUpsertOutput,
} from './schemas.ts';
import { upsertCompany } from './service.ts';

const tags = ['Companies'];

export const companiesRouter = router({
  upsert: publicApiMutation('companies:write', { oneTrip: true })
    .meta({
      openapi: { method: 'POST', path: '/companies/upsert', tags, summary: 'Create or update a company by domain' },
      errorCodes: WRITE_ERRORS,
    })
    .input(CompanyUpsertInput)
    .output(CompanyUpsertOutput)
    .mutation(({ ctx, input }) => upsertCompany(ctx.db, ctx.actor, input, ctx.envelope.now, ctx.envelope)),

  list: publicApiProcedure('companies:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/companies',
        tags,
        summary: 'List companies, oldest change first, to sync or reconcile',
        description:
          'Companies in `updatedAt` then `id` order, in cursor pages. A company changed while you page moves to the end and is listed again: de-duplicate on `id`, keeping the latest `updatedAt`. To sync again later, pass `updatedSince` a minute before the greatest `updatedAt` you saw (see Reading and reconciling). Unknown query parameters are refused with 400.',
      },
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'invalid_cursor'],
    })
    .input(CompanyListInput)
    .output(CompanyRecordPage)
    .query(({ ctx, input }) => listCompanyRecords(ctx.db, ctx.actor, input)),

  // Before `get`: `/companies/search` must reach the search, not be read as the id "search".
  search: publicApiProcedure('companies:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/companies/search',
        tags,
        summary: 'Find a company by domain',
        description: 'The domain is normalised as upserts normalise it, so a URL finds its company. 404 when there is none.',
      },
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'not_found'],
    })
    .input(CompanySearchInput)
    .output(CompanyRecord)
    .query(({ ctx, input }) => findCompanyByDomain(ctx.db, ctx.actor.orgId, input.domain)),

  get: publicApiProcedure('companies:read')
    .meta({
      openapi: { method: 'GET', path: '/companies/{id}', tags, summary: 'Get a company by id' },
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'not_found'],
    })
    .input(CompanyIdInput)
    .output(CompanyRecord)
    .query(({ ctx, input }) => getCompanyRecord(ctx.db, ctx.actor.orgId, input.id)),
});
