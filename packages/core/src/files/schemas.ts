import { z } from 'zod';

export const FileView = z.object({
  id: z.uuid(),
  contactId: z.uuid(),
  kind: z.enum(['photo', 'file']),
  filename: z.string(),
  contentType: z.string().meta({ description: 'For photos the type proven by the image signature; for files as declared.' }),
  size: z.number().int(),
  sha256: z.string(),
  uploadedBy: z.uuid().nullable(),
  createdAt: z.iso.datetime(),
  downloadPath: z.string().meta({ description: 'GET it with the same credentials: `/api/files/{id}`.' }),
});
export type FileView = z.infer<typeof FileView>;

export const ListFilesInput = z.object({ id: z.uuid({ message: 'id must be a contact id (UUID)' }) });

export const ListFilesOutput = z.object({
  files: z.array(FileView).meta({ description: 'The contact files, newest first (the photo is at /api/contacts/{id}/photo).' }),
});
