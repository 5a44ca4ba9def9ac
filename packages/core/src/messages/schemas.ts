import { z } from 'zod';
import { text } from '../validation/index.ts';
import { MessageView } from '../events/records.ts';

// The record's wire shape is the event payload's too, so it is defined once, below the resources, in events/.
export { MessageView };

const contactId = z.uuid({ message: 'id must be a contact id (UUID)' });
const phone = text(32).min(3);

export const SendSmsInput = z.object({
  contactId: contactId.meta({ description: 'The contact to text; its phone number is the recipient.' }),
  body: text(1600).min(1, 'body must not be empty'),
});
export type SendSmsInput = z.infer<typeof SendSmsInput>;

export const ListMessagesInput = z.object({
  id: contactId,
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
export type ListMessagesInput = z.infer<typeof ListMessagesInput>;

export const ListMessagesOutput = z.object({
  conversationId: z.uuid().nullable(),
  messages: z.array(MessageView).meta({ description: 'The latest messages, oldest first.' }),
});

export const InboundSmsInput = z.object({
  orgId: z.uuid().meta({
    description: 'The organization the receiving number belongs to; set per number in the provider webhook settings.',
  }),
  from: phone.meta({ description: 'The sender; matched on its digits against the contacts of the organization.' }),
  to: phone,
  body: text(10_000, { trim: false }),
  providerMessageId: text(200).min(1).meta({ description: 'Re-deliveries with the same id are stored once.' }),
});
export type InboundSmsInput = z.infer<typeof InboundSmsInput>;

export const InboundSmsOutput = z.object({
  status: z.enum(['stored', 'duplicate', 'no_matching_contact']).meta({
    description:
      '`duplicate`: this providerMessageId was stored before. `no_matching_contact`: no live contact has the sender number; nothing is stored.',
  }),
  messageId: z.uuid().nullable(),
  conversationId: z.uuid().nullable(),
});
export type InboundSmsOutput = z.infer<typeof InboundSmsOutput>;
