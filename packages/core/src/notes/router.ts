import { publicApiMutation } from '../auth/procedures.ts';
import { WRITE_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { NoteCreateInput, NoteView } from './schemas.ts';
import { addNote } from './service.ts';

export const notesRouter = router({
  create: publicApiMutation('notes:write')
    .meta({
      openapi: { method: 'POST', path: '/contacts/{id}/notes', tags: ['Notes'], summary: 'Add a note to a contact' },
      successStatus: 201,
      errorCodes: [...WRITE_ERRORS, 'not_found'],
    })
    .input(NoteCreateInput)
    .output(NoteView)
    .mutation(({ ctx, input }) => addNote(ctx.db, ctx.actor, input.id, input.body, ctx.deps.clock.now())),
});
