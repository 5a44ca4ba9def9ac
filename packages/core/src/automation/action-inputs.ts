import { z } from 'zod';
import { EmailSchema, SourceSchema } from '../contacts/v1/schemas.ts';
import { text } from '../validation/index.ts';
import { required } from './schemas.ts';

/*
 * Inputs of the automation-platform actions (spec "Automation-platform hooks", Actions). Platforms send a field the
 * user left unmapped as "" or null, so every optional input reads those as "not given"; a required input given as ""
 * or null is missing. Messages name the input, since the platform shows them to someone who never saw this API.
 */

const requiredText = (name: string, max: number) => z.string(required(name)).pipe(text(max).min(1, `${name} is required`));

const requiredId = (name: string, what: string) =>
  z
    .string(required(name))
    .pipe(z.uuid({ message: `${name} must be ${what} id (UUID)` }))
    .meta({ example: '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10' });

/** An optional input: "" and null mean "not given" (`given()` maps them to undefined). */
const optional = <T extends z.ZodType>(name: string, schema: T, kind = 'text') =>
  z.union([z.literal(''), schema], { error: () => `${name} must be ${kind}` }).nullish();

/** "" and null, which platforms send for unmapped fields, as undefined. */
export function given<T>(value: T | '' | null | undefined): T | undefined {
  return value === '' || value === null || value === undefined ? undefined : value;
}

const TAG = text(100).min(1, 'tags must not be empty');

/** Tags as a list, or as one comma-separated string (what a platform's text field holds). */
const tagList = (name: string) =>
  z
    .union([z.array(z.string()), z.string()], required(name, 'a list of tags or a comma-separated string'))
    .transform((v) => (typeof v === 'string' ? v.split(',') : v).map((t) => t.trim()).filter((t) => t !== ''))
    .pipe(z.array(TAG).min(1, `${name} is required`).max(100, `${name} may hold at most 100 tags`))
    .meta({ description: 'A list, or one comma-separated string.', example: ['vip', 'webinar'] });

const Company = text(2048).meta({
  description: "The domain of one of your organization's companies (a URL works too); unknown domains are refused.",
  example: 'example.com',
});

export const CreateContactAction = z.object({
  firstName: requiredText('firstName', 200),
  lastName: requiredText('lastName', 200),
  email: optional('email', EmailSchema, 'an email address'),
  phone: optional('phone', text(50)),
  company: optional('company', Company),
  source: optional('source', SourceSchema).meta({ description: 'Origin of the record, e.g. the platform or the form; default `zapier`.' }),
  tags: optional('tags', tagList('tags'), 'a list of tags or a comma-separated string'),
});
export type CreateContactAction = z.infer<typeof CreateContactAction>;

export const UpdateContactAction = z
  .object({
    id: optional('id', z.uuid({ message: 'id must be a contact id (UUID)' }), 'a contact id (UUID)').meta({
      description: 'The contact to update.',
    }),
    email: optional('email', EmailSchema, 'an email address').meta({
      description: 'Identifies the contact when id is not given; with id, the new email.',
    }),
    firstName: optional('firstName', text(200)),
    lastName: optional('lastName', text(200)),
    phone: optional('phone', text(50)),
    company: optional('company', Company),
  })
  // Runs even when other inputs are wrong, so one answer names every problem.
  .refine((a) => given(a.id) !== undefined || given(a.email) !== undefined, {
    message: 'id or email is required: the contact to update',
    path: ['id'],
    when: (payload) => typeof payload.value === 'object' && payload.value !== null,
  });
export type UpdateContactAction = z.infer<typeof UpdateContactAction>;

export const CreateDealAction = z.object({
  contactId: requiredId('contactId', 'a contact'),
  pipelineId: requiredId('pipelineId', 'a pipeline'),
});
export type CreateDealAction = z.infer<typeof CreateDealAction>;

export const CreateTaskAction = z.object({
  title: requiredText('title', 500),
});
export type CreateTaskAction = z.infer<typeof CreateTaskAction>;

export const SendSmsAction = z.object({
  to: requiredText('to', 320).meta({
    description: 'The contact to text: its id, or its phone number (matched on the digits). Only contacts who consented to SMS are texted.',
    example: '+14155550123',
  }),
  body: requiredText('body', 1600),
});
export type SendSmsAction = z.infer<typeof SendSmsAction>;

export const AddTagAction = z.object({
  contactId: requiredId('contactId', 'a contact'),
  tags: tagList('tags'),
});
export type AddTagAction = z.infer<typeof AddTagAction>;
