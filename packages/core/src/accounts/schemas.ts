import { z } from 'zod';
import { text } from '../validation/index.ts';

/** NIST SP 800-63B: at least 8 characters, no composition rules; the cap keeps scrypt's input (and its cost) bounded. */
export const PasswordSchema = text(256, { trim: false })
  .min(8, 'password must be at least 8 characters')
  .max(256, 'password must be at most 256 characters')
  .meta({ description: 'At least 8 characters, at most 256.', example: 'correct horse battery staple' });

export const NewEmailSchema = text(320)
  .toLowerCase()
  .pipe(z.email({ message: 'email must be a valid email address' }).max(254))
  .meta({ example: 'ada@example.com' });

/** Sign-in takes any string: a malformed email is just a wrong one, and must not answer faster or differently. */
const SignInEmailSchema = text(254).toLowerCase().meta({ example: 'ada@example.com' });

const NameSchema = text(200).min(1);
const TokenSchema = text(200).min(1);
const IsoDate = z.iso.datetime().meta({ description: 'ISO 8601 UTC with milliseconds.' });
export const RoleSchema = z.enum(['owner', 'admin', 'member']);

export const UserView = z.object({
  id: z.uuid(),
  orgId: z.uuid(),
  email: z.string(),
  name: z.string().nullable(),
  role: RoleSchema,
});
export type UserView = z.infer<typeof UserView>;

export const SessionView = z.object({
  token: z.string().meta({
    description:
      'The session token (`lws_...`): send it as `Authorization: Bearer`. Shown once. Empty when the session was set as a cookie, see X-Leadwire-Session.',
  }),
  expiresAt: IsoDate,
  user: UserView,
});
export type SessionView = z.infer<typeof SessionView>;

export const SignUpInput = z.object({
  organizationName: NameSchema,
  email: NewEmailSchema,
  password: PasswordSchema,
  name: NameSchema.optional(),
});
export type SignUpInput = z.infer<typeof SignUpInput>;

export const SignInInput = z.object({ email: SignInEmailSchema, password: text(256, { trim: false }) });
export type SignInInput = z.infer<typeof SignInInput>;

export const OkView = z.object({ ok: z.literal(true) });

export const ChangePasswordInput = z.object({ currentPassword: text(256, { trim: false }), newPassword: PasswordSchema });
export const ConfirmPasswordInput = z.object({ password: text(256, { trim: false }) });
export const ConfirmPasswordView = z.object({
  keyCreationUnlockedUntil: IsoDate.meta({ description: 'API keys can be created from this session until then (ISO 8601).' }),
});

export const ResetRequestInput = z.object({ email: SignInEmailSchema });
export const ResetPasswordInput = z.object({ token: TokenSchema, newPassword: PasswordSchema });

export const InviteInput = z.object({ email: NewEmailSchema, role: z.enum(['admin', 'member']) });
export type InviteInput = z.infer<typeof InviteInput>;
export const InviteView = z.object({
  id: z.uuid(),
  email: z.string(),
  role: z.enum(['admin', 'member']),
  expiresAt: IsoDate,
});
export type InviteView = z.infer<typeof InviteView>;
export const PendingInviteView = InviteView.extend({ createdAt: IsoDate, invitedBy: z.object({ id: z.uuid(), email: z.string() }) });
export type PendingInviteView = z.infer<typeof PendingInviteView>;
export const PendingInvitesView = z.object({ invites: z.array(PendingInviteView) });
export const AcceptInviteInput = z.object({ token: TokenSchema, password: PasswordSchema, name: NameSchema.optional() });
export type AcceptInviteInput = z.infer<typeof AcceptInviteInput>;

export const MemberView = UserView.omit({ orgId: true }).extend({ active: z.boolean(), createdAt: IsoDate });
export type MemberView = z.infer<typeof MemberView>;
export const MembersView = z.object({ members: z.array(MemberView) });

export const UserIdInput = z.object({ userId: z.uuid() });
export const ChangeRoleInput = z.object({ userId: z.uuid(), role: RoleSchema });
