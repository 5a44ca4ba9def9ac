import { z } from 'zod';
import { EventContact, EXAMPLE_CONTACT } from '../../events/payload.ts';
import { ContactView } from '../../events/records.ts';
import { CustomSchema } from '../../records/fields.ts';
import { SyncPageFields, syncPageOf } from '../../records/sync-page.ts';
import { text } from '../../validation/index.ts';
import { ContactConsent, EXAMPLE_CONSENT } from '../../consent/schemas.ts';

export { ContactView };

/** Letters, digits, dot, dash, underscore; 1 to 40 characters (spec: contact source). */
export const SourceSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,40}$/, 'source must be 1-40 characters: letters, digits, dot, dash or underscore')
  .meta({ description: 'Origin of the record. Applied to new contacts only; default `api`.', example: 'webinar-2026' });

export const EmailSchema = text(320)
  .toLowerCase()
  .pipe(z.email({ message: 'email must be a valid email address' }).max(254))
  .meta({ description: 'Matched lowercased and trimmed. An existing email is never replaced.', example: 'ada@example.com' });

export const TagsSchema = z
  .array(text(100).min(1, 'tags must not be empty'))
  .max(100)
  .meta({ description: 'Tags to add. Tags are only added, never removed by an upsert.', example: ['vip', 'newsletter'] });

export const ContactUpsertInput = z
  .object({
    email: EmailSchema.nullish(),
    firstName: text(200).nullish(),
    lastName: text(200).nullish(),
    phone: text(50).nullish(),
    title: text(200).nullish().meta({ description: 'Job title; returned as `jobTitle` by search.' }),
    companyDomain: text(2048).nullish().meta({
      description: 'Links the contact to an existing company by domain (normalised to the bare host). Never creates a company.',
      example: 'example.com',
    }),
    tags: TagsSchema.optional(),
    custom: CustomSchema.optional(),
    source: SourceSchema.optional(),
  })
  .meta({
    description:
      'Identify the contact by email, or by companyDomain together with firstName and lastName. Fields sent overwrite stored values; fields omitted are left alone; null clears a field.',
  });
export type ContactUpsertInput = z.infer<typeof ContactUpsertInput>;

export const MatchedBySchema = z.enum(['email', 'domain_name']).nullable();

export const ContactUpsertOutput = z.object({
  id: z.uuid(),
  created: z.boolean().meta({ description: 'True when a new contact was created.' }),
  matchedBy: MatchedBySchema.meta({
    description: '`email` or `domain_name` (first and last name at the company domain); null when created.',
  }),
});
export type ContactUpsertOutput = z.infer<typeof ContactUpsertOutput>;

/**
 * A `+` sent raw in a query string is form encoding for a space, so `?email=ada+news@example.com` arrives as
 * `ada news@example.com`: no email has a space, so that answer says how to send the `+`.
 */
const RAW_PLUS =
  "email must be percent-encoded in the query string: a raw '+' reads as a space, so send '+' as %2B (ada%2Bnews@example.com)";

/** An email to look a contact up by, from a query string: trimmed and lowercased, as emails are stored. */
export const LookupEmail = text(320)
  .refine((s) => !s.includes(' '), { message: RAW_PLUS, abort: true })
  .pipe(EmailSchema);

export const ContactSearchInput = z.object({
  email: LookupEmail.meta({
    description: 'Email to look up (case-insensitive). Percent-encode a `+` as %2B.',
    example: 'ada@example.com',
  }),
});

export const BATCH_MAX = 100;

export const BatchUpsertInput = z.object({
  contacts: z
    .array(z.unknown())
    .min(1, 'contacts must hold at least one contact')
    .max(BATCH_MAX, `contacts may hold at most ${BATCH_MAX} contacts per call`)
    .meta({
      description: `Up to ${BATCH_MAX} contacts, each with the same fields and rules as POST /v1/contacts/upsert.`,
    }),
});

export const BatchRowResult = z.union([
  z.object({ index: z.number().int(), ok: z.literal(true), id: z.uuid(), created: z.boolean(), matchedBy: MatchedBySchema }),
  z.object({
    index: z.number().int(),
    ok: z.literal(false),
    error: z.object({
      error: z.string(),
      code: z.string(),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  }),
]);

export const BatchUpsertOutput = z.object({
  results: z.array(BatchRowResult).meta({ description: 'One result per input row, in input order.' }),
  created: z.number().int(),
  updated: z.number().int(),
  failed: z.number().int(),
});

/** A contact as /v1's reads return it: the very object contact events carry as `data.contact`. */
export const ContactRecord = EventContact.meta({
  id: 'ContactRecord',
  description: 'A contact: the same object as `data.contact` in contact events.',
  example: EXAMPLE_CONTACT,
});

/** A contact as GET /v1/contacts/{id} returns it: the record, plus its consent (not in pages nor in events). */
export const ContactDetail = EventContact.extend({ consent: ContactConsent }).meta({
  id: 'ContactDetail',
  description: 'A contact: the same object as `data.contact` in contact events, plus `consent` (read-only).',
  example: { ...EXAMPLE_CONTACT, consent: EXAMPLE_CONSENT },
});
export type ContactDetail = z.infer<typeof ContactDetail>;

/** Strict: an unknown query parameter is refused (after authentication, as every input), never ignored. */
export const ContactListInput = z.strictObject(SyncPageFields);
export const ContactRecordPage = syncPageOf(ContactRecord);
export const ContactIdInput = z.strictObject({ id: z.uuid().meta({ description: 'The contact id.' }) });
