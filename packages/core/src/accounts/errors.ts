import { AppError } from '../errors.ts';

/** `Retry-After` travels with the error, so every surface (REST, tRPC, the HTML pages) sends it. */
const withRetryAfter = (err: AppError, seconds: number) => Object.assign(err, { headers: { 'retry-after': String(seconds) } });

/** The refusals of accounts and sessions; each code is stable and documented on its operation. */
export const accountErrors = {
  invalidCredentials: () => new AppError('invalid_credentials', 'Wrong email or password'),
  wrongPassword: () => new AppError('wrong_password', 'The password is incorrect'),
  userDeactivated: () => new AppError('user_deactivated', 'This account has been deactivated; ask an owner or admin of your organization'),
  tooManyAttempts: (retryAfter: number) =>
    withRetryAfter(
      new AppError('too_many_attempts', `Too many failed sign-in attempts; try again in ${retryAfter} s`, { retryAfter }),
      retryAfter,
    ),
  addressLimited: (action: 'sign-up' | 'password-reset', retryAfter: number) =>
    withRetryAfter(
      new AppError(
        'rate_limited',
        `Too many ${action === 'sign-up' ? 'sign-ups' : 'password reset requests'} from your address; try again in ${retryAfter} s`,
        { retryAfter },
      ),
      retryAfter,
    ),
  invalidToken: (what: 'reset' | 'invite') =>
    new AppError(
      'invalid_token',
      what === 'reset'
        ? 'This password reset link is invalid, expired or already used; request a new one'
        : 'This invitation is invalid, expired or already accepted; ask for a new one',
    ),
  sessionRequired: (action: string) => new AppError('session_required', `${action} needs a signed-in session; an API key cannot do it`),
  confirmationRequired: (message: string) => new AppError('confirmation_required', message),
  emailTaken: (email: string) => new AppError('email_taken', `A user with email ${email} already exists`),
  lastOwner: () => new AppError('last_owner', 'An organization keeps at least one active owner; make someone else owner first'),
  cannotDeactivateSelf: () => new AppError('cannot_deactivate_self', 'You cannot deactivate your own account'),
  ownersOnly: () => new AppError('forbidden_role', 'Only an owner can deactivate or reactivate an owner', { required: ['owner'] }),
  userNotFound: (id: string) => new AppError('not_found', `No user ${id} in your organization`),
};
