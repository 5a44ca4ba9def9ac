import { AppError } from './errors.ts';

/** A 409: the request is well formed but the record's current state refuses it (a name taken, a decision made). */
export const conflict = (code: string, message: string, details: Record<string, unknown> = {}) =>
  new AppError(409, code, message, details);
