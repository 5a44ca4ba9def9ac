import { internalProcedure } from '../auth/internal.ts';
import { router } from '../trpc.ts';
import { createCompany } from './create.ts';
import { getCompanyRecord, listCompaniesNewestFirst } from './read.ts';
import { AppCompanyListInput, AppCompanyPage, CompanyCreateInput, CompanyIdInput, CompanyRecord } from './schemas.ts';

const tags = ['Companies'];
const READ_ERRORS = ['unauthorized', 'wrong_api_surface', 'rate_limited', 'validation_failed'] as const;

/** The application's companies: any member may list, read and create them, as contacts. */
export const appCompaniesRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/companies', tags, summary: 'List companies, newest first; `q` searches name and domain' },
      errorCodes: [...READ_ERRORS, 'invalid_cursor'],
    })
    .input(AppCompanyListInput)
    .output(AppCompanyPage)
    .query(({ ctx, input }) => listCompaniesNewestFirst(ctx.db, ctx.actor.orgId, input)),

  get: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/companies/{id}', tags, summary: 'A company' },
      errorCodes: [...READ_ERRORS, 'not_found'],
    })
    .input(CompanyIdInput)
    .output(CompanyRecord)
    .query(({ ctx, input }) => getCompanyRecord(ctx.db, ctx.actor.orgId, input.id)),

  create: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/companies',
        tags,
        summary: 'Create a company (409 company_exists when the domain is taken)',
        description:
          'The domain is normalised to the bare lowercase host. An existing domain is never changed here: the answer is 409 `company_exists` with `existingCompanyId`.',
      },
      successStatus: 201,
      errorCodes: [...READ_ERRORS, 'company_exists', 'save_failed'],
    })
    .input(CompanyCreateInput)
    .output(CompanyRecord)
    .mutation(({ ctx, input }) => createCompany(ctx.db, ctx.actor, input, ctx.deps.clock.now())),
});
