import { z } from 'zod';
import { PageFields, pageOf } from '../records/pagination.ts';
import { IsoDateTime, httpUrl, text } from '../validation/index.ts';
import { FormConsentInput, FormConsentView } from '../consent/schemas.ts';

export const FIELD_TYPES = ['text', 'email', 'tel', 'url', 'number', 'textarea', 'select', 'checkbox'] as const;
export const CAPTCHA_PROVIDERS = ['turnstile', 'hcaptcha', 'recaptcha'] as const;
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number];
export const MAX_FIELDS = 50;

/**
 * Field ids are the names submissions use, so they cannot take the reserved keys' shapes: a leading `_`, `utm_`, or
 * the CAPTCHA token names.
 */
const RESERVED_ID = /^(_|utm_|g-recaptcha-response$|cf-turnstile-response$|h-captcha-response$)/i;

export const FormField = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'id must be 1-64 letters, digits, _ or -, starting with a letter')
      .refine((id) => !RESERVED_ID.test(id), 'id must not look like a reserved key (utm_…, a CAPTCHA token name)')
      .meta({ example: 'email' }),
    label: text(200).min(1, 'label must not be empty').meta({ example: 'Email address' }),
    type: z.enum(FIELD_TYPES),
    required: z.boolean().default(false),
    options: z
      .array(text(200).min(1, 'an option must not be empty'))
      .min(1)
      .max(100)
      .optional()
      .meta({ description: 'The choices of a `select` field (required there, refused elsewhere).' }),
  })
  .superRefine((f, ctx) => {
    if (f.type === 'select' && !f.options) ctx.addIssue({ code: 'custom', path: ['options'], message: 'a select field needs options' });
    if (f.type !== 'select' && f.options) ctx.addIssue({ code: 'custom', path: ['options'], message: 'only a select field takes options' });
  });
export type FormField = z.output<typeof FormField>;

/** Submissions may name a field by its label, so labels must be as unambiguous as ids. */
const Fields = z
  .array(FormField)
  .min(1, 'a form needs at least one field')
  .max(MAX_FIELDS, `a form has at most ${MAX_FIELDS} fields`)
  .superRefine((fields, ctx) => {
    const seen = new Map<string, number>();
    fields.forEach((f, i) => {
      for (const [key, what] of [
        [f.id.toLowerCase(), 'id'],
        [f.label.toLowerCase(), 'label'],
      ] as const) {
        const other = seen.get(key);
        if (other !== undefined && other !== i)
          ctx.addIssue({ code: 'custom', path: [i, what], message: `${what} ${JSON.stringify(key)} is used by another field` });
        seen.set(key, i);
      }
    });
  });

const CaptchaInput = z
  .object({
    provider: z.enum(CAPTCHA_PROVIDERS),
    siteKey: text(200).min(1, 'siteKey must not be empty'),
    secret: text(500).min(1, 'secret must not be empty').optional().meta({
      description:
        'The provider secret. Required when connecting; on update, omit it to keep the stored one (same provider). Never returned.',
    }),
  })
  .meta({ description: 'Connects a CAPTCHA provider: submissions must then carry a token it accepts.' });

const HttpUrl = httpUrl('redirectUrl');

const ThankYou = z
  .union([
    z.strictObject({ message: text(2000).min(1, 'message must not be empty') }),
    z.strictObject({ redirectUrl: HttpUrl.meta({ example: 'https://www.example.com/thanks' }) }),
  ])
  .meta({ description: 'What a submitter sees: a message, or a redirect to your page. Default: a short thank-you message.' });

export const FormCreateInput = z.object({
  name: text(200).min(1, 'name must not be empty'),
  fields: Fields,
  published: z.boolean().default(false),
  pipelineId: z.uuid().nullish().meta({ description: 'Pipeline for submissions; omitted or null: the lead router picks one.' }),
  captcha: CaptchaInput.nullish(),
  thankYou: ThankYou.nullish(),
  consent: FormConsentInput.nullish(),
});
export type FormCreateInput = z.output<typeof FormCreateInput>;

export const FormUpdateInput = z.object({
  id: z.uuid({ message: 'id must be a form id (UUID)' }),
  name: text(200).min(1, 'name must not be empty').optional(),
  fields: Fields.optional(),
  published: z.boolean().optional(),
  pipelineId: z.uuid().nullish().meta({ description: 'null hands submissions to the lead router.' }),
  captcha: CaptchaInput.nullish().meta({ description: 'null disconnects the provider.' }),
  thankYou: ThankYou.nullish().meta({ description: 'null restores the default message.' }),
  consent: FormConsentInput.nullish().meta({
    description: 'Replaces the consent checkboxes; null removes them (entries already recorded stay).',
  }),
});
export type FormUpdateInput = z.output<typeof FormUpdateInput>;

export const FormIdInput = z.object({ id: z.uuid({ message: 'id must be a form id (UUID)' }) });
export const FormListInput = z.object({ ...PageFields });
export type FormListInput = z.output<typeof FormListInput>;

const FieldView = z.object({
  id: z.string(),
  label: z.string(),
  type: z.enum(FIELD_TYPES),
  required: z.boolean(),
  options: z.array(z.string()).optional(),
});

export const FormView = z.object({
  id: z.uuid(),
  name: z.string(),
  fields: z.array(FieldView),
  published: z.boolean(),
  pipelineId: z.uuid().nullable(),
  captcha: z
    .object({ provider: z.enum(CAPTCHA_PROVIDERS), siteKey: z.string(), secretSet: z.literal(true) })
    .nullable()
    .meta({ description: 'The connected provider; the secret is never returned, only that it is set.' }),
  thankYou: z.union([z.object({ message: z.string() }), z.object({ redirectUrl: z.string() })]).nullable(),
  consent: FormConsentView.nullable().meta({ description: 'The consent checkboxes and whether a ticked one needs double opt-in.' }),
  submitUrl: z.string().meta({ description: 'POST JSON or a urlencoded form here; no key needed.' }),
  embedUrl: z.string().meta({ description: 'GET `{ html }` to insert into a page.' }),
  hostedUrl: z.string().meta({ description: 'The hosted page of the form (404 while unpublished).' }),
  embedSnippet: z.string().meta({ description: 'The HTML to paste into a page: a placeholder and the form loader script.' }),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});
export type FormView = z.infer<typeof FormView>;

export const FormPage = pageOf(FormView);

export const SubmissionListInput = z.object({ id: z.uuid({ message: 'id must be a form id (UUID)' }), ...PageFields });
export type SubmissionListInput = z.output<typeof SubmissionListInput>;

export const SubmissionView = z.object({
  id: z.uuid(),
  createdAt: IsoDateTime,
  contact: z
    .object({ id: z.uuid(), email: z.string().nullable() })
    .nullable()
    .meta({ description: 'The contact made or matched; null without an email answer or once the contact is in the trash.' }),
  answers: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).meta({ description: 'Answers by field id.' }),
  attribution: z
    .object({ utm: z.record(z.string(), z.string()), referrer: z.string().nullable(), landingPage: z.string().nullable() })
    .meta({ description: 'As the submission arrived: `utm_*` (without the prefix), `_referrer`, `_landingPage`.' }),
});
export type SubmissionView = z.infer<typeof SubmissionView>;

export const SubmissionPage = pageOf(SubmissionView);
