import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';
import type { RequestContext } from '../context.ts';
import { baseProcedure, router } from '../trpc.ts';
import { addressLimit } from './address-limits.ts';
import { confirmPassword } from './confirmation.ts';
import type { Postbox } from './emails.ts';
import { acceptInvite, invite, pendingInvites } from './invites.ts';
import { changePassword, requestPasswordReset, resetPassword } from './password.service.ts';
import * as s from './schemas.ts';
import { logOutAll, signOut } from './sessions.service.ts';
import { type Client, signIn, signUp } from './sign-in.ts';
import { changeRole, listMembers, setActive } from './users.ts';

const client = (ctx: Pick<RequestContext, 'ip' | 'header' | 'deps'>): Client => ({
  ip: ctx.ip ?? 'unknown',
  userAgent: ctx.header('user-agent'),
  now: ctx.deps.clock.now(),
  wait: (ms) => ctx.deps.clock.sleep(ms),
});
const postbox = (ctx: Pick<RequestContext, 'deps' | 'jobs'>): Postbox => ({ jobs: ctx.jobs, appUrl: ctx.deps.config.APP_URL });
const ok = { ok: true as const };
/** The new session as the caller asked for it: as cookies, its token left out of the body, when a browser opted in. */
const handOver = async (ctx: Pick<RequestContext, 'browserSession'>, view: Promise<s.SessionView>): Promise<s.SessionView> => {
  const session = await view;
  if (!ctx.browserSession) return session;
  ctx.browserSession.open(session);
  return { ...session, token: '' };
};
const tags = ['Account'];

/** Every operation that hashes a password can meet full hashing slots: 503 with `retry-after` (see hash-slots.ts). */
const HASHING = 'service_unavailable' as const;
const BUSY =
  ' Password checks queue for a few hashing slots per server; when the queue is full the answer is 503 `service_unavailable` with `Retry-After`.';
const SIGN_IN_THROTTLE =
  'Wrong passwords slow down the address that sent them, never the account as a whole: after 3 failures of one email from one address in 15 minutes, that pair must wait 1 s, then 2, 4, ... up to 15 minutes (429 `too_many_attempts` with `Retry-After`; the password is not checked). An address with 20 failures across accounts in 15 minutes is refused for every account it has not signed in to within a day. Many failures on one account from many addresses only delay checks from addresses the account does not know.' +
  BUSY;

export const accountsRouter = router({
  signUp: baseProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/sign-up',
        tags,
        summary: 'Create an organization and its owner, signed in',
        description: `Each address may try a few sign-ups an hour (SIGNUP_PER_ADDRESS_PER_HOUR, default 10), taken emails included; beyond, 429 \`rate_limited\` with \`Retry-After\`.${BUSY}`,
        protect: false,
      },
      successStatus: 201,
      errorCodes: ['email_taken', 'rate_limited', HASHING],
    })
    .input(s.SignUpInput)
    .output(s.SessionView)
    .mutation(({ ctx, input }) =>
      handOver(ctx, signUp(ctx.db, input, client(ctx), addressLimit(ctx.deps, ctx.deps.config.SIGNUP_PER_ADDRESS_PER_HOUR))),
    ),

  signIn: baseProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/sign-in',
        tags,
        summary: 'Sign in with email and password',
        description: SIGN_IN_THROTTLE,
        protect: false,
      },
      errorCodes: ['invalid_credentials', 'user_deactivated', 'too_many_attempts', HASHING],
    })
    .input(s.SignInInput)
    .output(s.SessionView)
    .mutation(({ ctx, input }) => handOver(ctx, signIn(ctx.db, input, client(ctx)))),

  signOut: internalProcedure
    .meta({ openapi: { method: 'POST', path: '/accounts/sign-out', tags, summary: 'End this session' }, errorCodes: ['session_required'] })
    .input(z.void())
    .output(s.OkView)
    .mutation(async ({ ctx }) => (await signOut(ctx.db, ctx.actor), ctx.browserSession?.close(), ok)),

  logOutAll: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/log-out-all',
        tags,
        summary: 'Log out of all devices and stop every API key you created',
      },
    })
    .input(z.void())
    .output(s.OkView)
    .mutation(async ({ ctx }) => (await logOutAll(ctx.db, ctx.actor, ctx.deps.clock.now()), ctx.browserSession?.close(), ok)),

  changePassword: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/change-password',
        tags,
        summary: 'Change your password; ends every other session and your API keys',
        description: `The current password is checked under the sign-in throttle. ${SIGN_IN_THROTTLE}`,
      },
      errorCodes: ['wrong_password', 'too_many_attempts', HASHING],
    })
    .input(s.ChangePasswordInput)
    .output(s.SessionView)
    .mutation(({ ctx, input }) => handOver(ctx, changePassword(ctx.db, ctx.actor, input, client(ctx)))),

  requestPasswordReset: baseProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/password-reset/request',
        tags,
        summary: 'Email a one-time password reset link',
        description:
          'Answers the same, after the same work, whether or not the email belongs to an account. Each address may ask a few times an hour (PASSWORD_RESET_PER_ADDRESS_PER_HOUR, default 10); beyond, 429 `rate_limited` with `Retry-After`. Each account gets at most 5 reset emails an hour.',
        protect: false,
      },
      errorCodes: ['rate_limited'],
    })
    .input(s.ResetRequestInput)
    .output(s.OkView)
    .mutation(
      async ({ ctx, input }) => (
        await requestPasswordReset(
          ctx.db,
          ctx.jobs,
          input.email,
          client(ctx),
          addressLimit(ctx.deps, ctx.deps.config.PASSWORD_RESET_PER_ADDRESS_PER_HOUR),
        ),
        ok
      ),
    ),

  resetPassword: baseProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/password-reset/complete',
        tags,
        summary: 'Set a new password with a reset token',
        description: BUSY.trim(),
        protect: false,
      },
      errorCodes: ['invalid_token', HASHING],
    })
    .input(s.ResetPasswordInput)
    .output(s.OkView)
    .mutation(async ({ ctx, input }) => (await resetPassword(ctx.db, input, client(ctx)), ok)),

  confirmPassword: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/confirm-password',
        tags,
        summary: 'Re-enter your password to unlock API key creation for 5 minutes',
      },
      errorCodes: ['wrong_password', 'session_required', 'too_many_attempts', HASHING],
    })
    .input(s.ConfirmPasswordInput)
    .output(s.ConfirmPasswordView)
    .mutation(async ({ ctx, input }) => ({
      keyCreationUnlockedUntil: await confirmPassword(ctx.db, ctx.actor, input.password, client(ctx)),
    })),

  invite: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/accounts/invites', tags, summary: 'Invite someone by email as admin or member' },
      successStatus: 201,
      errorCodes: ['forbidden_role', 'email_taken'],
    })
    .input(s.InviteInput)
    .output(s.InviteView)
    .mutation(({ ctx, input }) => invite(ctx.db, ctx.actor, input, postbox(ctx), ctx.deps.clock.now())),

  invites: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/accounts/invites',
        tags,
        summary: 'Pending invitations (owners and admins)',
        description:
          'Invitations not yet accepted, within their 7 days, whose sender is still an active owner or admin: the ones that can still be accepted. Most recently sent first.',
      },
      errorCodes: ['forbidden_role'],
    })
    .input(z.void())
    .output(s.PendingInvitesView)
    .query(async ({ ctx }) => ({ invites: await pendingInvites(ctx.db, ctx.actor, ctx.deps.clock.now()) })),

  acceptInvite: baseProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/invites/accept',
        tags,
        summary: 'Accept an invitation: choose a password, join, signed in',
        description: BUSY.trim(),
        protect: false,
      },
      errorCodes: ['invalid_token', 'email_taken', HASHING],
    })
    .input(s.AcceptInviteInput)
    .output(s.SessionView)
    .mutation(({ ctx, input }) => handOver(ctx, acceptInvite(ctx.db, input, client(ctx)))),

  members: internalProcedure
    .meta({ openapi: { method: 'GET', path: '/accounts/members', tags, summary: 'The users of your organization' } })
    .input(z.void())
    .output(s.MembersView)
    .query(async ({ ctx }) => ({ members: await listMembers(ctx.db, ctx.actor) })),

  changeRole: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/accounts/members/{userId}/role', tags, summary: 'Change a member\u2019s role (owners only)' },
      errorCodes: ['forbidden_role', 'not_found', 'last_owner'],
    })
    .input(s.ChangeRoleInput)
    .output(s.MemberView)
    .mutation(({ ctx, input }) => changeRole(ctx.db, ctx.actor, input.userId, input.role, ctx.deps.clock.now())),

  deactivate: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/members/{userId}/deactivate',
        tags,
        summary: 'Deactivate a user: their sessions and API keys stop at once',
      },
      errorCodes: ['forbidden_role', 'not_found', 'cannot_deactivate_self', 'last_owner'],
    })
    .input(s.UserIdInput)
    .output(s.MemberView)
    .mutation(({ ctx, input }) => setActive(ctx.db, ctx.actor, input.userId, false, ctx.deps.clock.now())),

  reactivate: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/accounts/members/{userId}/reactivate',
        tags,
        summary: 'Reactivate a user (their old sessions and keys stay ended)',
      },
      errorCodes: ['forbidden_role', 'not_found'],
    })
    .input(s.UserIdInput)
    .output(s.MemberView)
    .mutation(({ ctx, input }) => setActive(ctx.db, ctx.actor, input.userId, true, ctx.deps.clock.now())),
});
