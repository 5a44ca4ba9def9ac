import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { NonprofitStatus, VerificationRecordInput, VerificationRecordOutput } from './schemas.ts';
import { nonprofitStatus, recordVerification } from './service.ts';

const tags = ['Nonprofit'];

/** Owners and admins only: the organization's standing, not day-to-day CRM work. */
export const nonprofitRouter = router({
  status: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/nonprofit', tags, summary: 'Nonprofit activation and verification history (owner or admin)' },
      errorCodes: [...INTERNAL_ERRORS, 'forbidden_role'],
    })
    .input(z.void())
    .output(NonprofitStatus)
    .query(({ ctx }) => nonprofitStatus(ctx.db, ctx.actor)),

  recordVerification: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/nonprofit/verifications',
        tags,
        summary: 'Record a nonprofit verification (owner or admin); the first verified one activates the nonprofit plan',
      },
      successStatus: 201,
      errorCodes: [...INTERNAL_ERRORS, 'forbidden_role'],
    })
    .input(VerificationRecordInput)
    .output(VerificationRecordOutput)
    .mutation(({ ctx, input }) => recordVerification(ctx.db, ctx.actor, input, ctx.deps.clock.now())),
});
