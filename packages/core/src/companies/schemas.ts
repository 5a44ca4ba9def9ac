import { z } from 'zod';
import { text } from '../validation/index.ts';
import { CustomSchema } from '../contacts/v1/schemas.ts';

export const CompanyUpsertInput = z.object({
  domain: text(2048).min(1).meta({
    description: 'Matching key. A URL or host is normalised to the bare lowercase host (`https://www.Example.com/x` -> `example.com`).',
    example: 'example.com',
  }),
  name: text(300).nullish(),
  industry: text(200).nullish(),
  size: text(100).nullish().meta({ description: 'Free text, e.g. `11-50`.' }),
  custom: CustomSchema.optional(),
});
export type CompanyUpsertInput = z.infer<typeof CompanyUpsertInput>;

export const CompanyUpsertOutput = z.object({
  id: z.uuid(),
  created: z.boolean(),
  domain: z.string().meta({ description: 'The normalised domain the company is stored under.' }),
});
