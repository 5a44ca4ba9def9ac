import { z } from 'zod';
import { AppContact } from '../contacts/app/schemas.ts';
import { ContactSearchInput } from '../contacts/v1/schemas.ts';
import { PipelineView } from '../pipelines/schemas.ts';
import { text } from '../validation/index.ts';
import { limitQuery, required } from './schemas.ts';

/** Inputs and answers of the automation lookups: the find-contact search and the dropdowns' choices. */

export const FindContactInput = z.object({
  email: z.string(required('email', 'an email address')).pipe(ContactSearchInput.shape.email),
});
export const FoundContacts = z.array(AppContact).meta({
  description: 'The live contact with this email, or nothing: a list of 0 or 1 contacts, as platform searches expect.',
});

/** No query parameters; an unknown one is refused. */
export const NoQuery = z.object({}).optional();

export const PipelineChoices = z.array(PipelineView).meta({
  description: "The organization's pipelines, the default first, each with its stages in board order.",
});

export const TAG_CHOICES_MAX = 200;
export const TagChoice = z.object({
  id: z.string().meta({ description: 'The tag (send it as the value).', example: 'vip' }),
  name: z.string().meta({ example: 'vip' }),
  contacts: z.int().min(1).meta({ description: 'How many of the contacts looked through carry it.' }),
});
export const TagChoices = z.array(TagChoice).meta({
  description: `Up to ${TAG_CHOICES_MAX} tags of the organization's live contacts (of up to 10,000 of them), one per spelling ignoring case, most used first.`,
});

export const COMPANY_CHOICES_MAX = 100;
export const CompanyChoicesInput = z.object({
  after: text(2048)
    .optional()
    .meta({ description: "The last choice's `domain` of the previous page; omit for the first page.", example: 'example.com' }),
  limit: limitQuery(COMPANY_CHOICES_MAX, COMPANY_CHOICES_MAX),
});
export const CompanyChoice = z.object({
  id: z.uuid(),
  domain: z.string().meta({ description: 'What create_contact.company and update_contact.company take.', example: 'example.com' }),
  name: z.string().nullable(),
  label: z
    .string()
    .meta({ description: '`name (domain)`, or the domain when the company has no name.', example: 'Example Inc (example.com)' }),
});
export const CompanyChoices = z.array(CompanyChoice).meta({
  description: 'A page of the companies in domain order; fewer than `limit` means the last page.',
});
