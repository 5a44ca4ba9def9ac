import { z } from 'zod';
import { text } from '../validation/index.ts';
import { ContactUpsertInput } from '../contacts/v1/schemas.ts';

export const LEAD_WARNINGS = ['no_pipeline_found', 'pipeline_has_no_stages'] as const;

export const LeadInput = ContactUpsertInput.extend({
  // A one-member union: the REST adapter coerces plain number fields (turning null, false or "" into 0), not unions.
  score: z
    .union([
      z
        .number({ message: 'score must be a number' })
        .int('score must be a whole number')
        .min(0, 'score must be between 0 and 100')
        .max(100, 'score must be between 0 and 100'),
    ])
    .optional()
    .meta({ description: "Lead score 0-100; stored as the contact's manual score, which wins over the computed one." }),
  pipeline: text(200)
    .min(1)
    .optional()
    .meta({ description: 'Pipeline name (case-insensitive); the default pipeline when omitted.', example: 'Sales' }),
}).meta({
  description:
    'The contact fields and identity rule of POST /v1/contacts/upsert, plus the pipeline placement. The contact is saved even when the pipeline is missing or has no stages.',
});
export type LeadInput = z.infer<typeof LeadInput>;

export const LeadOutput = z.object({
  id: z.uuid().meta({ description: 'The contact id.' }),
  created: z.boolean().meta({ description: 'True when a new contact was created.' }),
  pipelineItemId: z
    .uuid()
    .nullable()
    .meta({ description: 'The placement on the pipeline (the existing one when the contact was already on it); null with a warning.' }),
  warning: z.enum(LEAD_WARNINGS).nullable(),
});
export type LeadOutput = z.infer<typeof LeadOutput>;
