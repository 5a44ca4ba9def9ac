import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';

export const MeOutput = z.object({
  userId: z.uuid(),
  orgId: z.uuid(),
  role: z.enum(['owner', 'admin', 'member']),
  via: z.enum(['session', 'internal_key']).meta({ description: 'How the request authenticated.' }),
});

/** Who the caller is: the first thing a frontend asks after signing in. */
export const me = internalProcedure
  .meta({ openapi: { method: 'GET', path: '/me', tags: ['Account'], summary: 'The signed-in user' } })
  .input(z.void())
  .output(MeOutput)
  .query(({ ctx }) => ({ userId: ctx.actor.userId, orgId: ctx.actor.orgId, role: ctx.actor.role, via: ctx.actor.via }));
