import { publicApiMutation } from '../auth/procedures.ts';
import { upsertOptions } from '../contacts/v1/options.ts';
import { WRITE_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { LeadInput, LeadOutput } from './schemas.ts';
import { createLead } from './service.ts';

export const leadsRouter = router({
  create: publicApiMutation('leads:write', { oneTrip: true })
    .meta({
      openapi: {
        method: 'POST',
        path: '/leads',
        tags: ['Leads'],
        summary: 'Upsert a contact and place it on the first stage of a pipeline',
      },
      errorCodes: [...WRITE_ERRORS, 'missing_identity', 'company_not_found', 'contact_limit_reached', 'save_failed'],
    })
    .input(LeadInput)
    .output(LeadOutput)
    .mutation(({ ctx, input }) => createLead(ctx.db, ctx.actor, input, upsertOptions(ctx))),
});
