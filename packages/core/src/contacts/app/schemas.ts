import { z } from 'zod';
import { text, urlText } from '../../validation/index.ts';
import { CustomSchema } from '../../records/fields.ts';
import { ContactView, EmailSchema, LookupEmail, SourceSchema } from '../v1/schemas.ts';
import { ContactConsent } from '../../consent/schemas.ts';

/** Contact list page size (spec "Limits"). */
export const PAGE_DEFAULT = 25;
export const PAGE_MAX = 100;

/**
 * Stages a user can move a contact to. The spec names no stage values; `lead` is what every new contact starts as,
 * and any stage may follow any other (the spec shows no transitions). Stored values outside the list (written by an
 * older release or an import) are still shown and filterable, so reads take any string.
 */
export const CONTACT_STAGES = ['lead', 'qualified', 'opportunity', 'customer', 'inactive'] as const;
export const StageSchema = z.enum(CONTACT_STAGES).meta({ description: 'Any stage may follow any other.', example: 'qualified' });

/**
 * Trimmed text where an empty string means "blank" and is stored as null, so merge sees it as fillable. `url` names a
 * field holding an address (any text, but no control characters: see urlText).
 */
const blankable = (max: number, url?: string) => (url ? urlText(url, max) : text(max)).transform((s) => (s === '' ? null : s)).nullish();

/**
 * The REST adapter coerces plain boolean and number body fields in place (`"false"` would become true, `null` or `""`
 * 0), and not unions: consent and scores must be refused when mistyped, never guessed.
 */
const uncoerced = <T extends z.ZodType>(schema: T) => z.union([schema]);

const TagList = z.array(text(100).min(1, 'tags must not be empty')).min(1).max(100);

const ContactFields = {
  email: EmailSchema.nullish(),
  firstName: blankable(200),
  lastName: blankable(200),
  phone: blankable(50),
  jobTitle: blankable(200),
  website: blankable(2048, 'website'),
  linkedin: blankable(2048, 'linkedin'),
  companyId: z.uuid().nullish().meta({ description: 'A company of your organization; null unlinks.' }),
  custom: CustomSchema.optional(),
  emailConsent: uncoerced(z.boolean()).optional(),
  smsConsent: uncoerced(z.boolean()).optional(),
};

export const ContactCreateInput = z
  .object({
    ...ContactFields,
    tags: TagList.optional(),
    source: SourceSchema.optional().meta({ description: 'Origin of the record; default `manual`. Never changes later.' }),
    stage: StageSchema.optional(),
  })
  .refine((c) => Boolean(c.email || c.firstName || c.lastName), {
    message: 'a contact needs at least an email, a first name or a last name',
    path: ['email'],
  });
export type ContactCreateInput = z.infer<typeof ContactCreateInput>;

export const ContactUpdateInput = z.object({ id: z.uuid(), ...ContactFields }).meta({
  description:
    'Fields sent replace the stored ones; fields omitted stay; null (or an empty string) clears. The email may change but stays unique among live contacts. `custom` merges key by key; a key sent as null is removed.',
});
export type ContactUpdateInput = z.infer<typeof ContactUpdateInput>;

export const IdInput = z.object({ id: z.uuid() });
export const TagsInput = z.object({ id: z.uuid(), tags: TagList });
export const StageInput = z.object({ id: z.uuid(), stage: StageSchema });
export const ScoreOverrideInput = z.object({
  id: z.uuid(),
  score: uncoerced(z.number().int().min(0).max(100))
    .nullable()
    .meta({ description: 'A manual score 0-100 that wins over the computed one; null clears it.' }),
});

export const SORT_FIELDS = ['createdAt', 'updatedAt', 'lastName', 'leadScore'] as const;

const filterText = (description: string) => text(200).min(1).optional().meta({ description });

export const ContactListInput = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_MAX, `limit may be at most ${PAGE_MAX} contacts per page`)
    .default(PAGE_DEFAULT)
    .meta({ description: `Page size, default ${PAGE_DEFAULT}, at most ${PAGE_MAX}.` }),
  cursor: text(2000, { trim: false }).optional().meta({ description: '`nextCursor` of the previous page, with the same sort and order.' }),
  stage: filterText('Only contacts at this stage.'),
  tag: filterText('Only contacts carrying this tag (case-insensitive).'),
  source: filterText('Only contacts with this source.'),
  q: filterText('Text search over first and last name, email, and company name and domain.'),
  email: LookupEmail.optional().meta({
    description: 'Only the contact with exactly this email (trimmed, case-insensitive; percent-encode a `+` as %2B).',
    example: 'ada@example.com',
  }),
  sort: z.enum(SORT_FIELDS).default('createdAt'),
  order: z.enum(['asc', 'desc']).default('desc'),
});
export type ContactListInput = z.infer<typeof ContactListInput>;

export const TrashListInput = z.object({
  limit: ContactListInput.shape.limit,
  cursor: ContactListInput.shape.cursor,
});

const iso = z.string().meta({ description: 'ISO 8601 UTC.' });

/** The public API's view of a contact, plus what the application shows beyond it. */
export const AppContact = ContactView.extend({
  website: z.string().nullable(),
  linkedin: z.string().nullable(),
  custom: z.record(z.string(), z.unknown()),
  source: z.string(),
  scoreOverride: z.number().int().nullable(),
  company: z.object({ id: z.uuid(), name: z.string().nullable(), domain: z.string() }).nullable(),
  emailConsent: z.boolean(),
  smsConsent: z.boolean(),
  createdAt: iso,
  updatedAt: iso,
});
export type AppContact = z.infer<typeof AppContact>;

export const ContactPage = z.object({
  items: z.array(AppContact),
  nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
});

export const TrashedContact = AppContact.extend({
  deletedAt: iso,
  purgeAfter: iso.meta({ description: 'When the nightly job may delete it for good (30 days after deletion).' }),
  restorable: z.boolean(),
  daysLeft: z.number().int().min(0).meta({
    description: "Whole days left to restore it, rounded up, by the server's clock; 0 once the 30-day window has closed.",
  }),
});
export const TrashPage = z.object({ items: z.array(TrashedContact), nextCursor: z.string().nullable() });

const entry = { id: z.uuid(), at: iso };
export const TimelineItem = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('note'), ...entry, body: z.string(), authorId: z.uuid().nullable() }),
  z.object({ kind: z.literal('event'), ...entry, event: z.string(), source: z.string().nullable() }),
  z.object({
    kind: z.literal('deal'),
    ...entry,
    title: z.string(),
    status: z.string(),
    valueCents: z.number().nullable(),
    currency: z.string(),
    stage: z.string().nullable(),
  }),
  z.object({ kind: z.literal('task'), ...entry, title: z.string(), dueAt: iso.nullable(), completedAt: iso.nullable() }),
  z.object({
    kind: z.literal('message'),
    ...entry,
    direction: z.string(),
    channel: z.string(),
    body: z.string(),
    status: z.string(),
  }),
  z.object({
    kind: z.literal('form_submission'),
    ...entry,
    formId: z.uuid().nullable().meta({ description: 'null once the form is deleted; its name is kept.' }),
    formName: z.string(),
    answers: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).meta({ description: 'By field id.' }),
    attribution: z.object({ utm: z.record(z.string(), z.string()), referrer: z.string().nullable(), landingPage: z.string().nullable() }),
  }),
  z.object({ kind: z.literal('page_view'), ...entry, url: z.string(), title: z.string().nullable(), referrer: z.string().nullable() }),
  z.object({
    kind: z.literal('custom_event'),
    ...entry,
    name: z.string().meta({ description: 'What the website named it with `leadwire.track(name, props)`.' }),
    props: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
    url: z.string(),
  }),
  z.object({
    kind: z.literal('workflow_run'),
    ...entry,
    workflowId: z.uuid().nullable().meta({ description: 'null once the workflow is deleted; its name is kept.' }),
    workflowName: z.string(),
    status: z.string().meta({ description: 'queued, running, completed or completed_with_errors.' }),
    steps: z
      .array(z.object({ action: z.string(), outcome: z.enum(['ok', 'error']).nullable() }))
      .meta({ description: 'Details: GET /workflow-runs/{runId}.' }),
    finishedAt: iso.nullable(),
  }),
]);
export type TimelineItem = z.infer<typeof TimelineItem>;

export const TIMELINE_DEFAULT = 50;
export const TIMELINE_MAX = 100;
const timelineLimit = z.coerce.number().int().min(1).max(TIMELINE_MAX).default(TIMELINE_DEFAULT);

export const TimelinePage = z.object({ items: z.array(TimelineItem), nextCursor: z.string().nullable() });
export const TimelineInput = z.object({ id: z.uuid(), limit: timelineLimit, cursor: text(500, { trim: false }).optional() });
export const ContactGetInput = z.object({ id: z.uuid(), timelineLimit });
/**
 * contacts.get's contact: the contact plus its consent by purpose (read-only, from the consent entries). Lists and
 * writes answer without it. `emailConsent` and `smsConsent` are the flags members may set; `consent` is the record.
 */
export const AppContactDetail = AppContact.extend({ consent: ContactConsent });
export type AppContactDetail = z.infer<typeof AppContactDetail>;
export const ContactWithTimeline = z.object({ contact: AppContactDetail, timeline: TimelinePage });

export const MERGE_MAX = 100;
export const ContactMergeInput = z
  .object({
    primaryId: z.uuid().meta({ description: 'The contact that stays; its values win.' }),
    secondaryIds: z
      .array(z.uuid())
      .min(1)
      .max(MERGE_MAX)
      .meta({ description: 'Duplicates merged into the primary and then deleted for good. Blank fields are filled in this order.' }),
  })
  .superRefine((v, ctx) => {
    if (v.secondaryIds.includes(v.primaryId)) {
      ctx.addIssue({ code: 'custom', path: ['secondaryIds'], message: 'secondaryIds must not contain primaryId' });
    }
    if (new Set(v.secondaryIds).size !== v.secondaryIds.length) {
      ctx.addIssue({ code: 'custom', path: ['secondaryIds'], message: 'secondaryIds must not repeat an id' });
    }
  });
export type ContactMergeInput = z.infer<typeof ContactMergeInput>;

export const MERGE_MOVED = [
  'notes',
  'conversations',
  'messages',
  'deals',
  'tasks',
  'bookings',
  'workflowRuns',
  'pipelineItems',
  'files',
  'aiActions',
  'formSubmissions',
] as const;
export const ContactMergeOutput = z.object({
  contact: AppContact,
  mergedIds: z.array(z.uuid()).meta({ description: 'The duplicates, now deleted for good.' }),
  moved: z.object(Object.fromEntries(MERGE_MOVED.map((k) => [k, z.number().int()])) as Record<(typeof MERGE_MOVED)[number], z.ZodNumber>),
  skippedPipelineItems: z
    .number()
    .int()
    .meta({ description: 'Placements of duplicates on pipelines the primary (or an earlier duplicate) was already on.' }),
});
export type ContactMergeOutput = z.infer<typeof ContactMergeOutput>;

export const DeleteOutput = z.object({ id: z.uuid(), deletedAt: iso, purgeAfter: iso });
