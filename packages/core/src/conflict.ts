import { AppError, type CodeWithStatus, type DetailsArgs } from './errors.ts';

/**
 * A 409: the request is well formed but the record's current state refuses it (a name taken, a decision made). Only a
 * catalogue code whose status is 409 is accepted.
 */
export const conflict = <C extends CodeWithStatus<409>>(code: C, message: string, ...rest: DetailsArgs<C>) =>
  new AppError(code, message, ...rest);
