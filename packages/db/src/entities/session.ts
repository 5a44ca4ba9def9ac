import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

/** A signed-in device: an opaque bearer token, stored hashed, valid while the user's credential epoch is unchanged. */
export const SessionSchema = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    tokenHash: p.text().unique().hidden(),
    userEpoch: p.integer(),
    expiresAt: p.datetime(),
    lastUsedAt: p.datetime().nullable(),
    /** Set by re-entering the password: API key creation is allowed until then (security confirmation). */
    keyCreationUnlockedUntil: p.datetime().nullable(),
    userAgent: p.text().nullable(),
  },
});
export class Session extends SessionSchema.class {}
SessionSchema.setClass(Session);

/** One-time, expiring password-reset token, stored hashed. */
export const PasswordResetTokenSchema = defineEntity({
  name: 'PasswordResetToken',
  tableName: 'password_reset_tokens',
  properties: {
    ...baseProperties,
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    tokenHash: p.text().unique().hidden(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  },
});
export class PasswordResetToken extends PasswordResetTokenSchema.class {}
PasswordResetTokenSchema.setClass(PasswordResetToken);

/** An invitation to join an organization with a role; accepted once through its token. */
export const InviteSchema = defineEntity({
  name: 'Invite',
  tableName: 'invites',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    invitedBy: () => p.manyToOne(User).deleteRule('cascade'),
    email: p.text(),
    role: p.enum(['admin', 'member'] as const),
    tokenHash: p.text().unique().hidden(),
    expiresAt: p.datetime(),
    acceptedAt: p.datetime().nullable(),
  },
});
export class Invite extends InviteSchema.class {}
InviteSchema.setClass(Invite);

/** Sign-in attempts, read to slow down and then refuse brute force per account and per address. */
export const SignInAttemptSchema = defineEntity({
  name: 'SignInAttempt',
  tableName: 'sign_in_attempts',
  indexes: [
    { name: 'sign_in_attempts_email_idx', properties: ['email', 'createdAt'] },
    { name: 'sign_in_attempts_ip_idx', properties: ['ip', 'createdAt'] },
  ],
  properties: {
    ...baseProperties,
    email: p.text(),
    ip: p.text(),
    succeeded: p.boolean(),
  },
});
export class SignInAttempt extends SignInAttemptSchema.class {}
SignInAttemptSchema.setClass(SignInAttempt);
