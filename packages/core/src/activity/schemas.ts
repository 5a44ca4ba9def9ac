import { z } from 'zod';
import { IsoDateTime } from '../validation/index.ts';

export const PERIODS = ['24h', '7d', '30d'] as const;
export const Period = z.enum(PERIODS, { message: 'period must be 24h, 7d or 30d' });
export type Period = z.infer<typeof Period>;

export const OverviewInput = z.object({
  period: Period.default('24h').meta({ description: 'The last 24 hours (hourly buckets), 7 days or 30 days (daily buckets).' }),
});
export type OverviewInput = z.infer<typeof OverviewInput>;

/** One line of a chart: what it counts (a key, an endpoint, a form, or nothing), an outcome, a count per bucket. */
export const Series = z.object({
  subject: z.string().meta({ description: 'The key, endpoint or form id counted; empty when the series has none.' }),
  name: z.string().meta({ description: "The subject as people know it: the key's name, the endpoint's URL, the form's name." }),
  outcome: z.string(),
  counts: z.array(z.number().int()).meta({ description: 'One count per bucket, in the order of `buckets`.' }),
  total: z.number().int(),
});
export type Series = z.infer<typeof Series>;

export const FailingEndpoint = z.object({
  id: z.uuid(),
  url: z.string(),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  failureCount: z.number().int().meta({ description: 'Failed automatic attempts in a row.' }),
  failuresUntilDisabled: z.number().int().meta({ description: 'Further failures in a row that disable it; 0 once disabled.' }),
  lastFailureAt: IsoDateTime.nullable(),
  lastError: z.string().nullable().meta({ description: "The last failed attempt's status code or error." }),
});

export const Overview = z.object({
  period: Period,
  bucket: z.enum(['hour', 'day']),
  timeZone: z.literal('UTC').meta({ description: 'Buckets are UTC hours or UTC days.' }),
  buckets: z.array(IsoDateTime).meta({ description: 'The start of each bucket, oldest first; the last one is under way.' }),
  api: z.array(Series).meta({ description: '/v1 requests by key and outcome (2xx, 4xx, 429, 5xx).' }),
  deliveries: z
    .array(Series)
    .nullable()
    .meta({ description: 'Webhook deliveries by endpoint and state (succeeded, failed, over_cap, skipped, pending); null for members.' }),
  submissions: z.array(Series).meta({ description: 'Form submissions by form.' }),
  pageViews: z.array(Series).meta({ description: 'Page views (`cookie` or `anonymous`) and visitors (`visitors`).' }),
  limits: z.object({
    deliveries: z
      .object({ used: z.number().int(), limit: z.number().int(), overCap: z.number().int(), resetsAt: IsoDateTime })
      .nullable()
      .meta({ description: "This UTC hour's webhook deliveries of the 1,000 allowed; null for members." }),
    keys: z
      .array(z.object({ id: z.uuid(), name: z.string(), used: z.number().int(), limit: z.number().int() }))
      .meta({ description: 'Public keys with requests in the current minute, nearest their 600/min first (members: their own).' }),
    contacts: z.object({ used: z.number().int(), limit: z.number().int(), plan: z.string() }),
  }),
  failing: z.array(FailingEndpoint).nullable().meta({ description: 'Endpoints failing now, worst first; null for members.' }),
});
export type Overview = z.infer<typeof Overview>;

export const WebsiteInput = z.object({
  period: Period.default('7d').meta({ description: 'The last 24 hours (hourly buckets), 7 days or 30 days (daily buckets).' }),
  page: z
    .string()
    .trim()
    .max(2000, 'page must be at most 2,000 characters')
    .regex(/^\//, 'page must be a path starting with /, e.g. /pricing')
    .optional()
    .meta({ description: 'Only views of this page (its path, without the query string).', example: '/pricing' }),
});
export type WebsiteInput = z.infer<typeof WebsiteInput>;

const Breakdown = z.array(z.object({ value: z.string(), views: z.number().int(), visitors: z.number().int() }));

export const Website = z.object({
  period: Period,
  page: z.string().nullable(),
  bucket: z.enum(['hour', 'day']),
  timeZone: z.literal('UTC'),
  buckets: z.array(IsoDateTime),
  views: z.array(z.number().int()).meta({ description: 'Page views per bucket.' }),
  visitors: z.array(z.number().int()).meta({ description: "Distinct visitors per bucket (browsers with the snippet's cookie)." }),
  totals: z.object({
    views: z.number().int(),
    visitors: z.number().int(),
    anonymousViews: z.number().int().meta({ description: 'Views counted without a visitor id (Global Privacy Control, Do Not Track).' }),
    identified: z.number().int().meta({ description: 'Contacts among the visitors.' }),
  }),
  pages: Breakdown,
  referrers: Breakdown.meta({ description: "Referrers' hosts." }),
  utmSources: Breakdown,
  utmCampaigns: Breakdown,
  contacts: z.array(
    z.object({
      id: z.uuid(),
      email: z.string().nullable(),
      name: z.string().nullable(),
      views: z.number().int(),
      lastSeenAt: IsoDateTime,
    }),
  ),
});
export type Website = z.infer<typeof Website>;
