import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

export const API_KEY_TYPES = ['public', 'internal'] as const;
export type ApiKeyType = (typeof API_KEY_TYPES)[number];

export const PUBLIC_PERMISSIONS = [
  'contacts:read',
  'contacts:write',
  'companies:read',
  'companies:write',
  'leads:write',
  'notes:write',
  'events:read',
] as const;
export type PublicPermission = (typeof PUBLIC_PERMISSIONS)[number];

/** The channel key changes are announced on (`{"k": key hash, "op": tg_op}` here, `{"u": user id, ...}` from users). */
export const KEY_CHANGES_CHANNEL = 'leadwire_keys';

const CHANGED_TRIGGER_DDL = `create trigger "api_keys_changed" after insert or delete or update of "revoked_at", "expires_at", "owner_epoch", "key_hash", "created_by_id"
on "api_keys" for each row execute function "api_keys_api_keys_changed_fn"()`;

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  // Every server process drops what it remembers of a key when the key changes; the DDL lives in the migration
  // Migration20261126050000.
  triggers: [
    { name: 'api_keys_changed', timing: 'after', events: ['insert', 'delete', 'update'], forEach: 'row', expression: CHANGED_TRIGGER_DDL },
  ],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    createdBy: () => p.manyToOne(User).deleteRule('cascade'),
    name: p.text(),
    type: p.enum(API_KEY_TYPES),
    permissions: p.array().default([]),
    /** SHA-256 of the full key value, hex. The value itself is never stored. */
    keyHash: p.text().unique().hidden(),
    /** First characters of the value, safe to display so owners can tell keys apart. */
    displayPrefix: p.text(),
    /** The creator's credential epoch when the key was made; the key dies when the user's epoch moves on. */
    ownerEpoch: p.integer(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
  },
});
export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);
