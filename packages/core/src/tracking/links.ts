import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Clock } from '../clock.ts';
import { emitEvents } from '../events/outbox.ts';
import { normalizeDomain } from '../companies/domain.ts';
import * as q from './sql.ts';

/**
 * Links to the organization's own site in texts Leadwire sends become `{base_url}/t/l/<token>`; following one
 * redirects to the original address with `?c=<contact id>` (which the tracking snippet there reads), and emits
 * `tracking.link_clicked`.
 */

/** http(s) URLs in running text; punctuation closing a sentence is not part of them (trimmed below). */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const TRAILING = /[.,;:!?)\]}'"]+$/;
export const LINK_TOKEN = /^[\w-]{22}$/;

export interface PlannedLink {
  token: string;
  url: string;
}

/** A host belongs to the site when it is the site's domain or one of its subdomains (`www.`, `shop.`). */
export function isOwnSite(url: string, siteDomain: string): boolean {
  if (!URL.canParse(url)) return false;
  const host = new URL(url).hostname.toLowerCase();
  return host === siteDomain || host.endsWith(`.${siteDomain}`);
}

/** The text with its own-site links replaced by tracked ones, and the links to store. Pure: no I/O. */
export function rewriteOwnLinks(body: string, siteDomain: string | null, linkBase: string): { body: string; links: PlannedLink[] } {
  if (!siteDomain) return { body, links: [] };
  const links: PlannedLink[] = [];
  const rewritten = body.replace(URL_IN_TEXT, (match) => {
    const trail = TRAILING.exec(match)?.[0] ?? '';
    const url = match.slice(0, match.length - trail.length);
    if (!isOwnSite(url, siteDomain)) return match;
    const token = randomBytes(16).toString('base64url');
    links.push({ token, url: new URL(url).href });
    return `${linkBase}/t/l/${token}${trail}`;
  });
  return { body: rewritten, links };
}

/** Rewrites a text to be sent to a contact, per its organization's site domain. */
export async function planOwnLinks(tx: Db, orgId: string, body: string, linkBase: string) {
  const [org] = await tx.run(q.SITE_DOMAIN, { orgId });
  return rewriteOwnLinks(body, org?.site_domain ?? null, linkBase);
}

export async function saveTrackedLinks(
  tx: Db,
  ref: { orgId: string; contactId: string; messageId: string; at: Date },
  links: readonly PlannedLink[],
): Promise<void> {
  for (const l of links) {
    const { orgId, contactId, messageId, at: now } = ref;
    await tx.run(q.INSERT_TRACKED_LINK, { id: randomUUID(), orgId, contactId, messageId, token: l.token, url: l.url, now });
  }
}

/**
 * Where a tracked link leads: its address with `c=<contact id>` added, and `tracking.link_clicked` emitted. A link
 * whose contact is in the trash still leads to the site, without the contact or an event. Null: no such link. `count`
 * false (HEAD requests, which link previews send) redirects without recording a click.
 */
export async function followLink(db: Db, clock: Clock, token: string, opts: { count: boolean }): Promise<string | null> {
  if (!LINK_TOKEN.test(token)) return null;
  const [link] = await db.run(q.TRACKED_LINK, { token });
  if (!link) return null;
  if (link.deleted_at) return link.url;
  const destination = new URL(link.url);
  destination.searchParams.set('c', link.contact_id);
  if (opts.count) {
    const contact = { id: link.contact_id, firstName: link.first_name, email: link.email };
    const data = { email: null, message: link.message_id ? { id: link.message_id } : null, url: link.url, contact };
    await emitEvents(db, [{ orgId: link.organization_id, event: 'tracking.link_clicked', source: 'inbound', data, at: clock.now() }]);
  }
  return destination.href;
}

/** The site domain setting, normalised like a company domain (`https://www.Example.com/x` -> `example.com`). */
export async function setSiteDomain(db: Db, orgId: string, siteDomain: string | null): Promise<{ siteDomain: string | null }> {
  const domain = siteDomain === null ? null : normalizeDomain(siteDomain);
  await db.run(q.SET_SITE_DOMAIN, { orgId, siteDomain: domain });
  return { siteDomain: domain };
}

export async function getSiteDomain(db: Db, orgId: string): Promise<{ siteDomain: string | null }> {
  const [org] = await db.run(q.SITE_DOMAIN, { orgId });
  return { siteDomain: org?.site_domain ?? null };
}
