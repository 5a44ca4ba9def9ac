import { z } from 'zod';
import { text } from '../validation/index.ts';

export const NoteCreateInput = z.object({
  id: z.uuid({ message: 'id must be a contact id (UUID)' }).meta({ description: 'The contact the note is attached to.' }),
  body: text(100_000).min(1, 'body must not be empty'),
});

export const NoteView = z.object({
  id: z.uuid(),
  contactId: z.uuid(),
  body: z.string(),
  createdAt: z.iso.datetime().meta({ description: 'ISO 8601 UTC with milliseconds.' }),
});
