import { z } from 'zod';
import { EX } from '../events/payload.ts';
import { IsoDateTime, text } from '../validation/index.ts';
import { CustomSchema } from '../records/fields.ts';
import { PageFields, pageOf } from '../records/pagination.ts';
import { SyncPageFields, syncPageOf } from '../records/sync-page.ts';

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
export type CompanyUpsertOutput = z.infer<typeof CompanyUpsertOutput>;

/** A company as /v1's and the application's reads return it. */
export const CompanyRecord = z
  .object({
    id: z.uuid(),
    domain: z.string().meta({ description: 'The normalised domain: the bare lowercase host, the natural key.', example: 'example.com' }),
    name: z.string().nullable(),
    industry: z.string().nullable(),
    size: z.string().nullable().meta({ description: 'Free text, e.g. `11-50`.' }),
    custom: z.record(z.string(), z.unknown()),
    createdAt: IsoDateTime,
    updatedAt: IsoDateTime,
  })
  .meta({
    id: 'CompanyRecord',
    description: 'A company of your organization.',
    example: {
      id: EX.company,
      domain: 'example.com',
      name: 'Example Inc',
      industry: 'Software',
      size: '11-50',
      custom: { tier: 'gold' },
      createdAt: '2026-11-18T16:20:05.112Z',
      updatedAt: '2026-11-21T08:41:37.950Z',
    },
  });
export type CompanyRecord = z.infer<typeof CompanyRecord>;

/** Strict, as /v1's contact reads: an unknown query parameter is refused, never ignored. */
export const CompanyListInput = z.strictObject(SyncPageFields);
export const CompanyRecordPage = syncPageOf(CompanyRecord);
export const CompanyIdInput = z.strictObject({ id: z.uuid().meta({ description: 'The company id.' }) });
export const CompanySearchInput = z.strictObject({
  domain: text(2048).min(1).meta({
    description: 'A domain, host or URL, normalised as upserts do (`https://www.Example.com/x` -> `example.com`).',
    example: 'example.com',
  }),
});

/** The application's create: the same fields as the /v1 upsert, but a domain that exists is a conflict, not an update. */
export const CompanyCreateInput = CompanyUpsertInput;
export type CompanyCreateInput = CompanyUpsertInput;

export const AppCompanyListInput = z.object({
  ...PageFields,
  q: text(200).min(1).optional().meta({ description: 'Only companies whose name or domain contains this text (case-insensitive).' }),
});
export type AppCompanyListInput = z.infer<typeof AppCompanyListInput>;
export const AppCompanyPage = pageOf(CompanyRecord);
