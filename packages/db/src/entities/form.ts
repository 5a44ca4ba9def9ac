import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamps } from './base.ts';
import { Contact } from './contact.ts';
import { Organization } from './organization.ts';
import { Pipeline } from './pipeline.ts';

/**
 * A form of the application: its fields, where submissions go (a pipeline, else the lead router), its CAPTCHA provider
 * and what a submitter sees afterwards. Anyone may post to a published form; an unpublished one answers 404.
 */
export const FormSchema = defineEntity({
  name: 'Form',
  tableName: 'forms',
  indexes: [{ name: 'forms_org_created_idx', properties: ['organization', 'createdAt'] }],
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    name: p.text(),
    /** `[{ id, label, type, required, options? }]`, validated by the forms service. */
    fields: p.json<unknown[]>().default('[]'),
    published: p.boolean().default(false),
    /** A deleted pipeline leaves the form to the lead router. */
    pipeline: () => p.manyToOne(Pipeline).nullable().deleteRule('set null'),
    captchaProvider: p.enum(['turnstile', 'hcaptcha', 'recaptcha'] as const).nullable(),
    captchaSiteKey: p.text().nullable(),
    /** Sent to the provider's verify endpoint; never returned by the API. */
    captchaSecret: p.text().nullable(),
    thankYouMessage: p.text().nullable(),
    redirectUrl: p.text().nullable(),
    /** `{ doubleOptIn, purposes: [{ purpose, text, version, required }] }`: the consent checkboxes (consent/schemas.ts). */
    consent: p.json<Record<string, unknown>>().nullable(),
  },
});
export class Form extends FormSchema.class {}
FormSchema.setClass(Form);

/**
 * One accepted submission: the answers keyed by field id and the attribution it arrived with. It outlives its form
 * (the form's name is copied) so a contact's timeline keeps it; it goes with its contact.
 */
export const FormSubmissionSchema = defineEntity({
  name: 'FormSubmission',
  tableName: 'form_submissions',
  indexes: [
    { name: 'form_submissions_contact_idx', properties: ['contact', 'createdAt'] },
    { name: 'form_submissions_form_idx', properties: ['form', 'createdAt'] },
    // The overview's rollup reads the last hours by time (Migration20261129100000): a range summary, no B-tree entry.
    {
      name: 'form_submissions_created_brin',
      expression: `create index "form_submissions_created_brin" on "form_submissions" using brin ("created_at") with (autosummarize = on)`,
    },
  ],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    form: () => p.manyToOne(Form).nullable().deleteRule('set null'),
    formName: p.text(),
    /** Null when the form has no email answer to match or create a contact by. */
    contact: () => p.manyToOne(Contact).nullable().deleteRule('cascade'),
    answers: p.json<Record<string, unknown>>().default('{}'),
    /** `{ utm: { source, ... }, referrer, landingPage }`. */
    attribution: p.json<Record<string, unknown>>().default('{}'),
    pipelineItemId: p.uuid().nullable(),
  },
});
export class FormSubmission extends FormSubmissionSchema.class {}
FormSubmissionSchema.setClass(FormSubmission);
