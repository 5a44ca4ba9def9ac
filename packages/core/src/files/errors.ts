import { AppError } from '../errors.ts';

const MB = 1024 * 1024;

export const fileErrors = {
  tooLarge: (what: string, maxBytes: number) => new AppError('file_too_large', `${what} is limited to ${maxBytes / MB} MB`, { maxBytes }),
  notAnImage: () =>
    new AppError('unsupported_file_type', 'A contact photo must be a JPEG, PNG, GIF or WebP image', {
      accepted: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'],
    }),
  notMultipart: () => new AppError('unsupported_media_type', 'Send the file as multipart/form-data, in a field named file'),
  malformed: (cause?: unknown) => new AppError('malformed_multipart', 'The multipart body could not be read', undefined, cause),
  tooManyParts: () => new AppError('too_many_parts', 'Send one file, and at most 10 other form fields'),
  missing: () => new AppError('file_missing', 'No file in the request: send it in a multipart field named file'),
  infected: (signature: string) =>
    new AppError('file_infected', `The file was refused: the virus scanner found ${signature}`, { signature }),
  scannerUnavailable: (cause?: unknown) =>
    new AppError('scanner_unavailable', 'Files cannot be virus-scanned right now, so none are accepted; try again later', undefined, cause),
};
