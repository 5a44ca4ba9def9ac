import { API_KEY_TYPES, PUBLIC_PERMISSIONS } from '@leadwire/db';
import { z } from 'zod';
import { int, text } from '../validation/index.ts';

/** Ten years: long enough for any integration, short enough that "expires" still means something. */
export const MAX_EXPIRY_DAYS = 3650;

export const ApiKeyCreateInput = z
  .object({
    name: text(100).min(1, 'name must not be empty'),
    type: z.enum(API_KEY_TYPES).meta({
      description: '`public`: only /v1, with the permissions ticked. `internal`: the application surface, acting as you.',
    }),
    permissions: z
      .array(z.enum(PUBLIC_PERMISSIONS))
      .optional()
      .meta({ description: 'Public API keys only, at least one. Internal keys carry your own reach instead.' }),
    expiresInDays: int({ min: 1, max: MAX_EXPIRY_DAYS, message: `expiresInDays must be a whole number of days, 1 to ${MAX_EXPIRY_DAYS}` })
      .nullish()
      .meta({ description: `Days until the key stops working (1 to ${MAX_EXPIRY_DAYS}); omit or null for a key that never expires.` }),
  })
  .superRefine((input, ctx) => {
    const ticked = input.permissions?.length ?? 0;
    if (input.type === 'public' && ticked === 0) {
      ctx.addIssue({ code: 'custom', path: ['permissions'], message: 'A Public API key needs at least one permission' });
    }
    if (input.type === 'internal' && ticked > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['permissions'],
        message: 'Internal keys carry your own reach; permissions apply to Public API keys only',
      });
    }
  });
export type ApiKeyCreateInput = z.infer<typeof ApiKeyCreateInput>;

export const ApiKeyIdInput = z.object({ id: z.uuid({ message: 'id must be an API key id (UUID)' }) });
export type ApiKeyIdInput = z.infer<typeof ApiKeyIdInput>;

const isoDate = z.iso.datetime().meta({ description: 'ISO 8601 UTC with milliseconds.' });

/** What a key list shows. Never the value (it is not stored) nor its hash. */
export const ApiKeyView = z.object({
  id: z.uuid(),
  name: z.string(),
  type: z.enum(API_KEY_TYPES),
  permissions: z.array(z.string()),
  displayPrefix: z.string().meta({ description: 'The first characters of the value, to tell keys apart.' }),
  status: z.enum(['active', 'revoked', 'expired', 'stopped']).meta({
    description:
      '`stopped`: the creator was deactivated, changed or reset their password, or logged out of all devices; the key no longer works.',
  }),
  createdAt: isoDate,
  lastUsedAt: isoDate.nullable().meta({ description: 'Updated at most once a minute.' }),
  expiresAt: isoDate.nullable(),
  revokedAt: isoDate.nullable(),
  createdBy: z.object({ id: z.uuid(), email: z.string() }),
});
export type ApiKeyView = z.infer<typeof ApiKeyView>;

export const ApiKeyList = z.object({ keys: z.array(ApiKeyView) });
export type ApiKeyList = z.infer<typeof ApiKeyList>;

export const ApiKeyCreated = ApiKeyView.extend({
  value: z.string().meta({ description: 'The key itself, shown this once: only a hash is stored, so it cannot be shown again.' }),
});
export type ApiKeyCreated = z.infer<typeof ApiKeyCreated>;
