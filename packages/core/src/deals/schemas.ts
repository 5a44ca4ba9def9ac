import { z } from 'zod';
import { text } from '../validation/index.ts';
import { PageFields, pageOf } from '../records/pagination.ts';
import { DEAL_STATUSES, DealView } from '../events/records.ts';

// The record's wire shape is the event payload's too, so it is defined once, below the resources, in events/.
export { DEAL_STATUSES, DealView };

const Title = text(300).min(1, 'title must not be empty');
// One-member unions: the REST adapter coerces plain number fields, turning null into 0.
const ValueCents = z
  .union([z.number().int('valueCents must be a whole number of cents').min(0).max(Number.MAX_SAFE_INTEGER)])
  .meta({ description: 'Amount in minor units (cents), so sums are exact.', example: 125000 });
const Currency = text(3)
  .toUpperCase()
  .regex(/^[A-Z]{3}$/, 'currency must be a three-letter ISO 4217 code')
  .meta({ example: 'EUR' });

export const DealCreateInput = z.object({
  contactId: z.uuid({ message: 'contactId must be a contact id (UUID)' }),
  pipelineId: z.uuid().optional().meta({ description: 'The default pipeline when omitted.' }),
  stageId: z.uuid().optional().meta({ description: "A stage of the deal's pipeline; its first stage when omitted." }),
  title: Title,
  valueCents: ValueCents.nullish(),
  currency: Currency.optional().meta({ description: 'USD when omitted.' }),
});
export type DealCreateInput = z.infer<typeof DealCreateInput>;

export const DealUpdateInput = z.object({
  id: z.uuid({ message: 'id must be a deal id (UUID)' }),
  title: Title.optional(),
  valueCents: ValueCents.nullish(),
  currency: Currency.optional(),
  pipelineId: z
    .uuid()
    .optional()
    .meta({ description: 'Move the deal to another pipeline: to `stageId`, or to its first stage when stageId is omitted.' }),
  stageId: z.uuid().optional().meta({ description: "A stage of the deal's (new) pipeline. Emits deal.stage_changed." }),
  status: z
    .enum(DEAL_STATUSES)
    .optional()
    .meta({ description: 'won or lost closes the deal (deal.won / deal.lost); open reopens it (deal.updated).' }),
});
export type DealUpdateInput = z.infer<typeof DealUpdateInput>;

export const DealIdInput = z.object({ id: z.uuid({ message: 'id must be a deal id (UUID)' }) });

export const DealListInput = z.object({
  pipelineId: z.uuid().optional(),
  stageId: z.uuid().optional(),
  contactId: z.uuid().optional(),
  status: z.enum(DEAL_STATUSES).optional(),
  ...PageFields,
});
export type DealListInput = z.infer<typeof DealListInput>;

export const DealPage = pageOf(DealView);
