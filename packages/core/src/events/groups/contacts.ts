import { z } from 'zod';
import { defineEvent, EventContact, EventContactRef, EXAMPLE_CONTACT, EXAMPLE_CONTACT_REF } from '../payload.ts';

const contact = EventContact;

export const contactEvents = [
  defineEvent({
    name: 'contact.created',
    label: 'Contact created',
    description:
      'A contact was created: in the application, by a /v1 upsert that matched no one (source `api`), or restored from the trash (`restored: true`).',
    data: z.object({
      contact,
      restored: z.literal(true).optional().meta({ description: 'Present when the contact came back from the trash.' }),
    }),
    source: 'api',
    exampleData: { contact: EXAMPLE_CONTACT },
  }),
  defineEvent({
    name: 'contact.updated',
    label: 'Contact updated',
    description:
      'A contact changed: an edit in the application, a /v1 upsert that matched it (sent even when nothing changed), or a merge into it (`mergedIds`).',
    data: z.object({
      contact,
      mergedIds: z.array(z.uuid()).optional().meta({ description: 'On a merge: the duplicates merged into this contact (now deleted).' }),
    }),
    source: 'api',
    exampleData: { contact: EXAMPLE_CONTACT },
  }),
  defineEvent({
    name: 'contact.deleted',
    label: 'Contact deleted',
    description:
      'A contact was moved to the trash (restorable for 30 days), or merged into another contact (`mergedInto`). `contact` is the contact as it was.',
    data: z.object({
      contact,
      mergedInto: z.uuid().optional().meta({ description: 'On a merge: the contact this one was merged into.' }),
    }),
    source: 'app',
    exampleData: { contact: EXAMPLE_CONTACT },
  }),
  defineEvent({
    name: 'contact.stage_changed',
    label: 'Contact stage changed',
    description: 'A contact moved to another stage; `contact.stage` is the new one, `previousStage` the one it left.',
    data: z.object({ contact, previousStage: z.string() }),
    source: 'app',
    exampleData: { contact: EXAMPLE_CONTACT, previousStage: 'lead' },
  }),
  defineEvent({
    name: 'contact.score_changed',
    label: 'Contact score changed',
    description:
      "A contact's lead score (0-100) moved: its data changed, a booking was made or cancelled, the AI step adjusted it (source `ai`), or a score was set by hand or through /v1/leads. `contact.leadScore` is the new score.",
    data: z.object({ contact, previousScore: z.number().int().min(0).max(100) }),
    source: 'ai',
    exampleData: { contact: EXAMPLE_CONTACT, previousScore: 40 },
  }),
  defineEvent({
    name: 'contact.tag_added',
    label: 'Tag added to contact',
    description:
      'A contact gained a tag it did not carry (compared case-insensitively): one event per tag, from the application or a /v1 upsert of an existing contact. Tags a contact is created with come with contact.created only.',
    data: z.object({ contact, tag: z.string().meta({ description: 'The tag added.' }) }),
    source: 'api',
    exampleData: { contact: EXAMPLE_CONTACT, tag: 'vip' },
  }),
  defineEvent({
    name: 'contact.consent_changed',
    label: 'Contact consent changed',
    description:
      "A contact's consent for a purpose was granted (a ticked box on a single opt-in form, or a double opt-in confirmed through its mailed link) or withdrawn (the unsubscribe link). Only changes: a second grant of a granted purpose sends nothing. Never set through an API key.",
    data: z.object({
      contact: EventContactRef,
      consent: z.object({
        purpose: z.string().meta({ description: '`email_marketing`, `sms`, or a purpose the workspace named.' }),
        granted: z.boolean(),
        method: z.enum(['single_opt_in', 'double_opt_in', 'unsubscribe_link']),
        text: z.string().nullable().meta({ description: 'The exact words the person agreed to (on a withdrawal: those withdrawn).' }),
        version: z.string().nullable(),
        formId: z.uuid().nullable(),
        entryId: z.uuid().meta({ description: 'The consent entry recorded (GET /api/contacts/{id}/consents).' }),
      }),
    }),
    source: 'inbound',
    exampleData: {
      contact: EXAMPLE_CONTACT_REF,
      consent: {
        purpose: 'email_marketing',
        granted: true,
        method: 'double_opt_in',
        text: 'Send me product news by email. I can unsubscribe at any time.',
        version: '2026-11',
        formId: '6a1f0c3e-2b4d-4e8f-9a7c-5d3b1e0f2a94',
        entryId: '0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b',
      },
    },
  }),
] as const;
