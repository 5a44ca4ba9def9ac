import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Clock } from '../clock.ts';
import { AppError, errors } from '../errors.ts';
import { emitEvents } from '../events/outbox.ts';
import { enforceRateLimit } from '../limits/rate-limit.ts';
import { PAGE_VIEW_MAX_BYTES, PageViewInput, VISITOR_ID } from './schemas.ts';
import * as q from './sql.ts';

export const trackingErrors = {
  tooLarge: () => new AppError('payload_too_large', `A page view body is at most ${PAGE_VIEW_MAX_BYTES} bytes`),
  mediaType: () =>
    new AppError('unsupported_media_type', 'Send the page view as JSON in the body, with Content-Type text/plain or application/json'),
  malformed: (why: string) => new AppError('malformed_json', why),
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MINUTE_MS = 60_000;
/** `fatal`: bytes that are not UTF-8 are refused rather than stored as U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A page view body as sent (text/plain or application/json): UTF-8 JSON of the PageViewInput shape. */
export function parsePageView(bytes: Uint8Array): PageViewInput {
  if (bytes.length > PAGE_VIEW_MAX_BYTES) throw trackingErrors.tooLarge();
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw trackingErrors.malformed('The page view body is not UTF-8 JSON');
  }
  return PageViewInput.parse(value);
}

/** The identifying query parameters are not kept in stored addresses: the contact they named is. */
export function withoutIdentity(address: string): string {
  if (!URL.canParse(address)) return address;
  const u = new URL(address);
  if (!u.searchParams.has('email') && !u.searchParams.has('c')) return address;
  u.searchParams.delete('email');
  u.searchParams.delete('c');
  return u.href;
}

/** What is kept of a view under Global Privacy Control or Do Not Track: an anonymous count of the page. */
function anonymous(v: PageViewInput): PageViewInput {
  const u = new URL(v.url);
  return { org: v.org, url: u.origin + u.pathname, referrer: null, title: v.title, visitor: null, email: null, contactId: null };
}

/** Who a snippet request is about: the fields page views and custom events share. */
type Visit = Pick<PageViewInput, 'visitor' | 'email' | 'contactId'>;

export async function contactOf(tx: Db, orgId: string, v: Visit): Promise<{ contact: q.ContactRef | undefined; identified: boolean }> {
  // Identification is about a browser: without a visitor id there is nothing to remember it by.
  if (!v.visitor) return { contact: undefined, identified: false };
  const [named] = v.contactId
    ? await tx.run(q.LIVE_CONTACT_BY_ID, { id: v.contactId, orgId })
    : v.email
      ? await tx.run(q.LIVE_CONTACT_BY_EMAIL, { orgId, email: v.email })
      : [];
  if (named) return { contact: named, identified: true };
  const [remembered] = await tx.run(q.CONTACT_OF_VISITOR, { orgId, visitorId: v.visitor });
  return { contact: remembered, identified: false };
}

/** Remembers the visitor as the contact and attaches their anonymous page views (counted) and custom events. */
export async function attachVisitor(tx: Db, orgId: string, visitorId: string, contactId: string): Promise<number> {
  await tx.run(q.REMEMBER_VISITOR, { id: randomUUID(), orgId, visitorId, contactId });
  await tx.run(q.ATTACH_ANONYMOUS_EVENTS, { contactId, orgId, visitorId });
  const [row] = await tx.run(q.ATTACH_ANONYMOUS_VIEWS, { contactId, orgId, visitorId });
  return row?.n ?? 0;
}

/**
 * Counts a request of the snippet (page view or custom event: one budget, TRACKING_PAGE_VIEWS_PER_MINUTE) in its
 * organization's minute; false for an unknown organization. Over the limit: 429 rate_limited.
 */
export async function countHit(db: Db, orgId: string, opts: Pick<RecordOptions, 'clock' | 'perMinute' | 'setHeader'>): Promise<boolean> {
  const now = opts.clock.now();
  const windowStart = new Date(now.getTime() - (now.getTime() % MINUTE_MS));
  const [count] = await db.run(q.COUNT_PAGE_VIEW, { orgId, windowStart });
  if (count?.hits == null) return false;
  enforceRateLimit({ count: count.hits, resetAt: new Date(windowStart.getTime() + MINUTE_MS) }, opts.perMinute, opts.setHeader, now);
  return true;
}

export interface RecordOptions {
  clock: Clock;
  /** Page views per organization per minute (TRACKING_PAGE_VIEWS_PER_MINUTE). */
  perMinute: number;
  /** The request carried `Sec-GPC: 1` or `DNT: 1`: keep an anonymous count only, whatever the body says. */
  anonymous: boolean;
  setHeader: (name: string, value: string | number) => void;
}

export type RecordResult = { recorded: false } | { recorded: true; pageViewId: string; contactId: string | null };

/**
 * Stores a page view for its organization, with the contact when the visitor is known: by `contactId` or `email`
 * (live contacts of the organization only; the snippet never creates contacts), else by an earlier identification of
 * the same visitor id. An identification also attaches the visitor's earlier anonymous views. Known contacts get
 * `tracking.page_visited`. An unknown organization is answered like a known one and nothing is stored, so the endpoint
 * does not tell which ids exist. Over the per-minute limit: 429 rate_limited.
 */
export async function recordPageView(db: Db, input: PageViewInput, opts: RecordOptions): Promise<RecordResult> {
  if (!(await countHit(db, input.org, opts))) return { recorded: false };
  const now = opts.clock.now();

  const v = opts.anonymous
    ? anonymous(input)
    : { ...input, url: withoutIdentity(input.url), referrer: input.referrer && withoutIdentity(input.referrer) };
  const orgId = v.org;
  return db.transaction(async (tx) => {
    const { contact, identified } = await contactOf(tx, orgId, v);
    if (contact && identified) await attachVisitor(tx, orgId, v.visitor!, contact.id);
    const id = randomUUID();
    await tx.run(q.INSERT_PAGE_VIEW, {
      id,
      orgId,
      contactId: contact?.id ?? null,
      visitorId: v.visitor ?? null,
      url: v.url,
      referrer: v.referrer,
      title: v.title,
      now,
    });
    if (contact) {
      const visit = { url: v.url, title: v.title, referrer: v.referrer, visitorId: v.visitor! };
      const ref = { id: contact.id, firstName: contact.first_name, email: contact.email };
      await emitEvents(tx, [{ orgId, event: 'tracking.page_visited', source: 'inbound', data: { visit, contact: ref }, at: now }]);
    }
    return { recorded: true, pageViewId: id, contactId: contact?.id ?? null };
  });
}

/**
 * Remembers that a browser's visitor id (the snippet's `lw_vid` cookie) belongs to a contact, and attaches that
 * visitor's earlier anonymous page views to them; later views of that browser are theirs too. For callers that learn
 * who a visitor is (a form submitted from the same browser). Joins the caller's transaction when called inside one.
 * An id that is not a snippet visitor id attaches nothing; a contact that is not a live contact of the organization is
 * 404 not_found. No event is emitted for the attached views: they were reported (anonymously) when they happened.
 */
export async function identifyVisitor(db: Db, orgId: string, visitorId: string, contactId: string): Promise<{ attached: number }> {
  if (!VISITOR_ID.test(visitorId)) return { attached: 0 };
  if (!UUID.test(contactId)) throw errors.notFound(`No contact with id ${contactId}`);
  return db.transaction(async (tx) => {
    const [contact] = await tx.run(q.LIVE_CONTACT_BY_ID, { id: contactId, orgId });
    if (!contact) throw errors.notFound(`No contact with id ${contactId}`);
    return { attached: await attachVisitor(tx, orgId, visitorId, contact.id) };
  });
}
