import { z } from 'zod';
import { jsonObject, text } from '../validation/index.ts';
import { PageFields, pageOf } from '../records/pagination.ts';
import { AI_ACTION_STATUSES, AiActionView } from '../events/records.ts';

// The record's wire shape is the event payload's too, so it is defined once, below the resources, in events/.
export { AI_ACTION_STATUSES, AiActionView };

export const AiActionCreateInput = z.object({
  contactId: z.uuid({ message: 'contactId must be a contact id (UUID)' }),
  kind: text(64)
    .regex(/^[a-z][a-z0-9_.-]{0,63}$/, 'kind must be 1-64 lowercase letters, digits, dot, dash or underscore, starting with a letter')
    .meta({ description: 'What the AI suggests doing, e.g. an automation action name.', example: 'send_sms' }),
  summary: text(2000).min(1, 'summary must not be empty').meta({ example: 'Follow up: asked for pricing twice' }),
  payload: jsonObject({ maxKeys: 100, label: 'payload' })
    .optional()
    .meta({ description: 'What approving would do, for the user to review; stored as given.', example: { body: 'Hi Ada, ...' } }),
});
export type AiActionCreateInput = z.infer<typeof AiActionCreateInput>;

export const AiActionIdInput = z.object({ id: z.uuid({ message: 'id must be an AI action id (UUID)' }) });

export const AiActionRejectInput = AiActionIdInput.extend({
  reason: text(1000).min(1).nullish().meta({ description: 'Optional: why the suggestion was wrong.' }),
});

export const AiActionListInput = z.object({
  contactId: z.uuid().optional(),
  status: z.enum(AI_ACTION_STATUSES).optional(),
  ...PageFields,
});
export type AiActionListInput = z.infer<typeof AiActionListInput>;

export const AiActionPage = pageOf(AiActionView);
