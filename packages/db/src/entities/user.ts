import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './base.ts';
import { Organization } from './organization.ts';

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  uniques: [{ name: 'users_email_unique', properties: ['email'] }],
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    /** Stored lowercased and trimmed. */
    email: p.text(),
    name: p.text().nullable(),
    passwordHash: p.text().hidden(),
    role: p.enum(ROLES).default('member'),
    active: p.boolean().default(true),
    /**
     * Bumped by a password change or reset, "log out of all devices" and deactivation. Sessions and API keys record
     * the epoch they were issued under and stop working the moment it moves.
     */
    credentialEpoch: p.integer().default(0),
  },
});
export class User extends UserSchema.class {}
UserSchema.setClass(User);
