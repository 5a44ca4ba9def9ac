import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './base.ts';
import { Organization } from './organization.ts';

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

const CREDENTIALS_TRIGGER_DDL = `create trigger "users_credentials_changed" after update of "active", "credential_epoch" on "users" for each row
when (old."active" is distinct from new."active" or old."credential_epoch" is distinct from new."credential_epoch")
execute function "users_users_credentials_changed_fn"()`;

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  // Every server process drops what it remembers of the user's keys when their credentials change (announced on
  // KEY_CHANGES_CHANNEL); the DDL lives in the migration Migration20261126050000.
  triggers: [
    { name: 'users_credentials_changed', timing: 'after', events: ['update'], forEach: 'row', expression: CREDENTIALS_TRIGGER_DDL },
  ],
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
