import { AppError, errors } from '../../errors.ts';
import { TRASH_DAYS } from './row.ts';

const UNIQUE_EMAIL_INDEX = 'contacts_org_email_live_unique';

export const contactErrors = {
  notFound: (id: string) => errors.notFound(`No contact with id ${id}`),
  /** The spec's application message, verbatim. */
  emailExists: (existingContactId?: string) =>
    new AppError('email_exists', 'Email already exists in your organization', existingContactId ? { existingContactId } : {}),
  companyNotFound: (id: string) => new AppError('company_not_found', `No company with id ${id} in your organization`, { companyId: id }),
  invalidCursor: () =>
    new AppError('invalid_cursor', 'cursor is not one this list returned with the same sort and order; start again without a cursor'),
  restoreExpired: (deletedAt: string) =>
    new AppError(
      'restore_window_expired',
      `This contact was deleted more than ${TRASH_DAYS} days ago (${deletedAt}) and can no longer be restored`,
      { deletedAt },
    ),
  notInTrash: (id: string) => new AppError('not_in_trash', `Contact ${id} is not in trash`),
  mergeNotFound: (ids: string[]) =>
    new AppError('not_found', `No live contact with id ${ids.join(', ')} in your organization; nothing was merged`, { ids }),
};

/** True for the unique index on live emails: a concurrent write took the email between our check and our write. */
export function isEmailConflict(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const pg = e as { code?: unknown; constraint?: unknown };
    if ((pg.code === '23505' || e.name === 'UniqueConstraintViolationException') && e.message.includes(UNIQUE_EMAIL_INDEX)) return true;
    if (pg.constraint === UNIQUE_EMAIL_INDEX) return true;
  }
  return false;
}
