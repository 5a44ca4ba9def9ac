import { z } from 'zod';
import { IsoDateTime, text } from '../validation/index.ts';

/** `email_marketing`, `sms`, or a purpose the owner names: lowercase letters, digits and `_`. */
export const CONSENT_PURPOSE = /^[a-z][a-z0-9_]{0,39}$/;
export const MAX_PURPOSES = 5;
/** What a submission sends for a purpose's checkbox: `_consent_<purpose>` (the `_` prefix no field id may take). */
export const consentKey = (purpose: string) => `_consent_${purpose}`;

/** How long a double opt-in confirmation link works, and a pending entry waits for it. */
export const CONFIRMATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const Purpose = z
  .string()
  .regex(CONSENT_PURPOSE, 'purpose must be 1-40 lowercase letters, digits or _, starting with a letter (email_marketing, sms, or your own)')
  .meta({ example: 'email_marketing' });

export const ConsentPurposeInput = z.object({
  purpose: Purpose,
  text: text(2000).min(1, 'text must not be empty').meta({
    description: 'The exact words shown beside the checkbox; recorded with every answer.',
    example: 'Send me product news by email.',
  }),
  version: text(40)
    .min(1, 'version must not be empty')
    .meta({ description: 'Your version of that text (change it when the text changes).', example: '2026-11' }),
  required: z.boolean().default(false).meta({ description: 'The form is refused unless it is ticked.' }),
});

export const FormConsentInput = z
  .object({
    doubleOptIn: z.boolean().default(false).meta({
      description:
        'A ticked box is only pending until the person follows the confirmation link mailed to them (7 days); then it is granted.',
    }),
    purposes: z
      .array(ConsentPurposeInput)
      .min(1, 'purposes must name at least one consent checkbox')
      .max(MAX_PURPOSES, `a form asks for at most ${MAX_PURPOSES} consents`)
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((p, i) => {
          if (seen.has(p.purpose)) ctx.addIssue({ code: 'custom', path: [i, 'purpose'], message: `${p.purpose} is asked twice` });
          seen.add(p.purpose);
        });
      }),
  })
  .meta({ description: 'Consent checkboxes: each submission records an entry per purpose (docs/website.md, "Consent").' });
export type FormConsent = z.output<typeof FormConsentInput>;

export const FormConsentView = z.object({
  doubleOptIn: z.boolean(),
  purposes: z.array(
    z.object({
      purpose: z.string(),
      text: z.string(),
      version: z.string(),
      required: z.boolean(),
      field: z
        .string()
        .meta({ description: 'The key a submission sends it under (true when ticked).', example: '_consent_email_marketing' }),
    }),
  ),
});

export const CONSENT_STATUSES = ['granted', 'declined', 'pending', 'withdrawn'] as const;
export const CONSENT_METHODS = ['single_opt_in', 'double_opt_in', 'unsubscribe_link'] as const;

export const ConsentEntryView = z.object({
  id: z.uuid(),
  purpose: z.string(),
  status: z.enum(CONSENT_STATUSES).meta({
    description:
      'granted (ticked on a single opt-in form, or a double opt-in confirmed), declined (shown, not ticked), pending (waiting for its confirmation link: see `expired`), withdrawn (the unsubscribe link).',
  }),
  expired: z.boolean().meta({ description: 'A pending entry whose confirmation link no longer works.' }),
  method: z.enum(CONSENT_METHODS),
  text: z.string().nullable().meta({ description: 'The exact words shown (on a withdrawal: those of the consent withdrawn).' }),
  version: z.string().nullable(),
  formId: z.uuid().nullable().meta({ description: 'null once the form is deleted; formName stays.' }),
  formName: z.string().nullable(),
  pageUrl: z.string().nullable(),
  ipHash: z.string().nullable().meta({
    description:
      "HMAC-SHA256 of the client's address under the workspace's own key: the same address gives the same hash; it is never stored.",
  }),
  confirms: z.uuid().nullable().meta({ description: 'On a double opt-in confirmation: the pending entry it confirms.' }),
  expiresAt: IsoDateTime.nullable(),
  at: IsoDateTime,
});
export type ConsentEntryView = z.infer<typeof ConsentEntryView>;

export const ContactConsents = z.object({
  purposes: z
    .array(
      z.object({
        purpose: z.string(),
        granted: z.boolean(),
        since: IsoDateTime.meta({ description: 'When the entry that decides it was recorded.' }),
        method: z.enum(CONSENT_METHODS),
        text: z.string().nullable(),
        version: z.string().nullable(),
      }),
    )
    .meta({
      description:
        'Each purpose with a grant or withdrawal: its latest one decides. A declined or pending entry changes nothing (not ticking a box is no withdrawal).',
    }),
  entries: z.array(ConsentEntryView).meta({ description: 'Every entry, newest first (at most 200).' }),
});
export type ContactConsents = z.infer<typeof ContactConsents>;

/** What holds for a purpose on the contact read: the entry statuses, and `expired` for a pending one past its link. */
export const CONSENT_STATES = ['granted', 'withdrawn', 'pending', 'expired', 'declined'] as const;

export const ConsentState = z.object({
  status: z.enum(CONSENT_STATES).meta({
    description:
      'granted or withdrawn: the latest grant or withdrawal of the purpose decides (a later unticked box or unconfirmed double opt-in changes nothing). Only a purpose never granted nor withdrawn takes its latest answer: pending (a double opt-in waiting for its confirmation link), expired (its link no longer works: never confirmed) or declined (shown, not ticked). Only granted means consent.',
  }),
  method: z.enum(CONSENT_METHODS).meta({ description: 'How the entry that decides it was recorded.' }),
  version: z
    .string()
    .nullable()
    .meta({ description: 'The version of the text that entry answered (its exact words: GET /contacts/{id}/consents).' }),
  at: IsoDateTime.meta({ description: 'When that entry was recorded.' }),
});
export type ConsentState = z.infer<typeof ConsentState>;

export const EXAMPLE_CONSENT = {
  email_marketing: { status: 'granted', method: 'double_opt_in', version: '2026-11', at: '2026-11-20T09:16:03.118Z' },
  sms: { status: 'declined', method: 'single_opt_in', version: '2026-11', at: '2026-11-20T09:15:42.301Z' },
} as const satisfies Record<string, ConsentState>;

export const ContactConsent = z.record(z.string(), ConsentState).meta({
  id: 'ContactConsent',
  description:
    'Read-only: the consent the contact gave through your forms, by purpose (`email_marketing`, `sms` or one you named), `{}` when none was asked. Recorded by forms, their double opt-in confirmation pages and unsubscribe links, never through an API key. The evidence (exact text, form, page, every entry): GET /contacts/{id}/consents.',
  example: EXAMPLE_CONSENT,
});
export type ContactConsent = z.infer<typeof ContactConsent>;

export const ContactIdInput = z.strictObject({ id: z.uuid({ message: 'id must be a contact id (UUID)' }) });
