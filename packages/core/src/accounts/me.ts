import { qb, statement } from '@leadwire/db';
import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';

export const MeOutput = z.object({
  userId: z.uuid(),
  orgId: z.uuid(),
  email: z.string().meta({ description: 'The signed-in user’s email (for an Internal key, its creator’s).' }),
  name: z.string().nullable(),
  role: z.enum(['owner', 'admin', 'member']),
  via: z.enum(['session', 'internal_key']).meta({ description: 'How the request authenticated.' }),
});

const PROFILE = statement<{ orgId: string; id: string }>()((p) =>
  qb.selectFrom('users').select(['email', 'name']).where('organization_id', '=', p.orgId).where('id', '=', p.id),
);

/** Who the caller is: the first thing a frontend asks after signing in (the console shows who is signed in). */
export const me = internalProcedure
  .meta({ openapi: { method: 'GET', path: '/me', tags: ['Account'], summary: 'The signed-in user' } })
  .input(z.void())
  .output(MeOutput)
  .query(async ({ ctx }) => {
    // The actor was authenticated as an active user in this request, so the row is there.
    const [profile] = await ctx.db.run(PROFILE, { orgId: ctx.actor.orgId, id: ctx.actor.userId });
    return {
      userId: ctx.actor.userId,
      orgId: ctx.actor.orgId,
      email: profile?.email ?? '',
      name: profile?.name ?? null,
      role: ctx.actor.role,
      via: ctx.actor.via,
    };
  });
