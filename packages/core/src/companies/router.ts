import { publicApiMutation } from '../auth/procedures.ts';
import { WRITE_ERRORS } from '../v1/shared.ts';
import { router } from '../trpc.ts';
import { CompanyUpsertInput, CompanyUpsertOutput } from './schemas.ts';
import { upsertCompany } from './service.ts';

export const companiesRouter = router({
  upsert: publicApiMutation('companies:write')
    .meta({
      openapi: { method: 'POST', path: '/companies/upsert', tags: ['Companies'], summary: 'Create or update a company by domain' },
      errorCodes: WRITE_ERRORS,
    })
    .input(CompanyUpsertInput)
    .output(CompanyUpsertOutput)
    .mutation(({ ctx, input }) => upsertCompany(ctx.db, ctx.actor, input, ctx.deps.clock.now())),
});
