import { z } from 'zod';
import { IsoDateTime, jsonObject, text } from '../validation/index.ts';
import { VerificationView } from '../events/records.ts';

// The record's wire shape is the event payload's too, so it is defined once, below the resources, in events/.
export { VerificationView };

export const VerificationRecordInput = z.object({
  status: z.enum(['verified', 'rejected']).meta({ description: 'The outcome of the check.' }),
  registrationNumber: text(100)
    .min(1)
    .nullish()
    .meta({ description: 'Charity or tax-exempt registration number.', example: 'EIN 12-3456789' }),
  evidence: jsonObject({ maxKeys: 50, label: 'evidence' })
    .optional()
    .meta({
      description: 'What the check rests on (registry links, document references).',
      example: { registry: 'https://example.org/r/123' },
    }),
});
export type VerificationRecordInput = z.infer<typeof VerificationRecordInput>;

export const NonprofitStatus = z.object({
  nonprofitActivatedAt: IsoDateTime.nullable().meta({ description: 'When the first verified verification activated the nonprofit plan.' }),
  verifications: z.array(VerificationView).meta({ description: 'Newest first.' }),
});
export type NonprofitStatus = z.infer<typeof NonprofitStatus>;

export const VerificationRecordOutput = z.object({
  verification: VerificationView,
  nonprofitActivatedAt: IsoDateTime.nullable(),
  activated: z.boolean().meta({ description: 'True when this verification activated the nonprofit plan.' }),
});
