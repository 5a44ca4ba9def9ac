import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';
import { router } from '../trpc.ts';
import { ApiKeyCreated, ApiKeyCreateInput, ApiKeyIdInput, ApiKeyList, ApiKeyView } from './schemas.ts';
import { createKey, listKeys, revokeKey } from './service.ts';

const TAGS = ['API keys'];

export const apiKeysRouter = router({
  list: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api-keys',
        tags: TAGS,
        summary: 'List API keys',
        description: 'Owners and admins see every key of the organization; members see the keys they created.',
      },
    })
    .input(z.void())
    .output(ApiKeyList)
    .query(async ({ ctx }) => ({ keys: await listKeys(ctx.db, ctx.actor, ctx.deps.clock.now()) })),

  create: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api-keys',
        tags: TAGS,
        summary: 'Create an API key',
        description:
          'Needs a security confirmation: re-enter your password on this session first; key creation then stays unlocked for 5 minutes. The value is returned in this response only.',
      },
      successStatus: 201,
      errorCodes: ['confirmation_required'],
    })
    .input(ApiKeyCreateInput)
    .output(ApiKeyCreated)
    .mutation(async ({ ctx, input }) => {
      const created = await createKey(ctx.db, ctx.actor, input, ctx.deps.clock.now());
      // The one response that carries a key value must never sit in a cache.
      ctx.setHeader('cache-control', 'no-store');
      return created;
    }),

  revoke: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api-keys/{id}/revoke',
        tags: TAGS,
        summary: 'Revoke an API key',
        description: 'Takes effect on the next request. Revoking a revoked key changes nothing and answers the same.',
      },
      errorCodes: ['not_found'],
    })
    .input(ApiKeyIdInput)
    .output(ApiKeyView)
    .mutation(({ ctx, input }) => revokeKey(ctx.db, ctx.actor, input.id, ctx.deps.clock.now())),
});
