import { internalProcedure } from '../auth/internal.ts';
import { router } from '../trpc.ts';
import { ListFilesInput, ListFilesOutput } from './schemas.ts';
import { listContactFiles } from './service.ts';

/**
 * Listing is typed RPC like the rest of the surface; uploads and downloads are multipart and binary, so they are plain
 * HTTP routes (apps/server/src/http/uploads.ts) over the same service.
 */
export const filesRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{id}/files', tags: ['Files'], summary: 'Files attached to a contact' },
      errorCodes: ['not_found'],
    })
    .input(ListFilesInput)
    .output(ListFilesOutput)
    .query(async ({ ctx, input }) => ({ files: await listContactFiles(ctx.db, ctx.actor, input.id) })),
});
