import { z } from 'zod';
import { normalizeDomain } from '../companies/domain.ts';
import { httpUrl, text } from '../validation/index.ts';

/** The largest page-view body accepted; the snippet's are a few hundred bytes (a 2 KB URL and a 2 KB referrer fit). */
export const PAGE_VIEW_MAX_BYTES = 8 * 1024;
export const URL_MAX = 2048;
export const TITLE_MAX = 300;

/** The snippet's visitor id: 28 base-36 characters; other clients may send any 8-64 of [A-Za-z0-9_-]. */
export const VISITOR_ID = /^[\w-]{8,64}$/;

/** The reserved key under which form submissions and captures carry the browser's visitor id (the `lw_vid` cookie). */
export const VISITOR_KEY = '_visitor';

/**
 * The visitor id a submission carries, or null. One that is not a visitor id leaves the lead unlinked from its page
 * views rather than refusing (and losing) the lead.
 */
export function visitorIdOf(body: unknown): string | null {
  // A JSON object, or the URLSearchParams of a page's urlencoded post.
  const visitor =
    body instanceof URLSearchParams
      ? body.get(VISITOR_KEY)
      : body && typeof body === 'object'
        ? (body as Record<string, unknown>)[VISITOR_KEY]
        : undefined;
  return typeof visitor === 'string' && VISITOR_ID.test(visitor) ? visitor : null;
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * The body of `POST /api/track/pageview` (JSON, sent as text/plain by sendBeacon). Unknown keys are ignored.
 * `email` and `contactId` come from the page's own query string (`?email=`, `?c=`), where other meanings of those names
 * are common (`?c=blue`): a value that is not an email or a contact id leaves the visit unidentified instead of
 * refusing it.
 */
export const PageViewInput = z.object({
  org: z
    .string()
    .regex(UUID, 'must be an organization id (UUID)')
    .transform((s) => s.toLowerCase()),
  url: httpUrl('url', URL_MAX),
  referrer: text(URL_MAX)
    .nullish()
    .transform((s) => s || null),
  title: text(1000)
    .nullish()
    .transform((s) => (s ? s.slice(0, TITLE_MAX) : null)),
  visitor: z.string().regex(VISITOR_ID, 'must be 8-64 characters of A-Z, a-z, 0-9, _ and -').nullish(),
  email: text(254)
    .nullish()
    .transform((s) => (s && EMAIL.test(s) ? s.toLowerCase() : null)),
  contactId: text(100)
    .nullish()
    .transform((s) => (s && UUID.test(s) ? s.toLowerCase() : null)),
});
export type PageViewInput = z.output<typeof PageViewInput>;

export const TrackingSettings = z.object({
  siteDomain: z.string().nullable().meta({
    description: "The organization's own website: links to it (or its subdomains) in texts Leadwire sends become tracked links.",
  }),
});
export type TrackingSettings = z.infer<typeof TrackingSettings>;

export const TrackingSettingsInput = z.object({
  siteDomain: text(2048)
    .refine((d) => normalizeDomain(d) !== null, 'must be a public domain such as example.com (a URL is reduced to its host)')
    .nullable()
    .meta({ description: 'A domain or URL (`https://www.example.com/` is stored as `example.com`); null turns link tracking off.' }),
});
export type TrackingSettingsInput = z.infer<typeof TrackingSettingsInput>;

export const WebsiteSnippets = z.object({
  organizationId: z.uuid().meta({ description: 'The workspace id the snippets carry (`data-org`).' }),
  tracking: z.string().meta({ description: 'The tracking snippet: paste into every page.' }),
  leadCapture: z.string().meta({ description: 'The lead-capture snippet: a placeholder for the universal form and its script.' }),
});
export type WebsiteSnippets = z.infer<typeof WebsiteSnippets>;
