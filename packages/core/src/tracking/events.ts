import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Db } from '@leadwire/db';
import { AppError } from '../errors.ts';
import { emitEvents } from '../events/outbox.ts';
import { text } from '../validation/index.ts';
import { PageViewInput } from './schemas.ts';
import { attachVisitor, contactOf, countHit, type RecordOptions, trackingErrors, withoutIdentity } from './service.ts';
import * as q from './sql.ts';

/**
 * Custom website events (issue 30): `leadwire.track(name, props)` on a page with the tracking snippet posts
 * `{ org, url, visitor?, email?, contactId?, name, props? }` to `POST /api/track/event`. Checked here, counted in the
 * page views' per-minute budget, stored in `tracking_events` (retention: as page views), and for a known visitor
 * emitted as `tracking.custom_event` (the contact's timeline, the changes feed, webhooks).
 */

/** A custom event's body is small: a name, ten short props and the page's address. */
export const CUSTOM_EVENT_MAX_BYTES = 4 * 1024;
/** Letters, digits and `_ . : -`, starting with a letter or digit: what analytics tools take as goal names. */
export const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
export const PROP_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,39}$/;
export const PROPS_MAX = 10;
export const PROP_STRING_MAX = 500;

const PropValue = z.union([text(PROP_STRING_MAX, { trim: false }), z.number().finite(), z.boolean(), z.null()], {
  error: `each prop must be a string of at most ${PROP_STRING_MAX} characters, a finite number, true, false or null`,
});

export const CustomEventInput = PageViewInput.pick({ org: true, url: true, visitor: true, email: true, contactId: true }).extend({
  name: z.string().regex(EVENT_NAME, 'must be 1-64 letters, digits, _ . : or -, starting with a letter or digit'),
  props: z
    .record(z.string(), PropValue)
    .superRefine((props, ctx) => {
      const keys = Object.keys(props);
      if (keys.length > PROPS_MAX) ctx.addIssue({ code: 'custom', message: `at most ${PROPS_MAX} props` });
      for (const k of keys.filter((k) => !PROP_KEY.test(k)).slice(0, 3))
        ctx.addIssue({ code: 'custom', path: [k], message: 'a prop name is 1-40 letters, digits, _ . or -, starting with a letter or _' });
    })
    .nullish()
    .transform((p) => p ?? {}),
});
export type CustomEventInput = z.output<typeof CustomEventInput>;

export const customEventErrors = {
  tooLarge: () => new AppError('payload_too_large', `A custom event body is at most ${CUSTOM_EVENT_MAX_BYTES} bytes`),
  mediaType: () =>
    new AppError('unsupported_media_type', 'Send the custom event as JSON in the body, with Content-Type text/plain or application/json'),
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseCustomEvent(bytes: Uint8Array): CustomEventInput {
  if (bytes.length > CUSTOM_EVENT_MAX_BYTES) throw customEventErrors.tooLarge();
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw trackingErrors.malformed('The custom event body is not UTF-8 JSON');
  }
  return CustomEventInput.parse(value);
}

export type CustomEventResult = { recorded: false } | { recorded: true; id: string; contactId: string | null };

/**
 * Stores a custom event, with the contact when the visitor is known (as a page view finds it: `contactId` or `email`
 * of a live contact, else an earlier identification of the visitor id; an identification also attaches the visitor's
 * earlier anonymous views and events). Known contacts get `tracking.custom_event`. Under GPC or DNT (the request's
 * headers or a body without a visitor) it is an anonymous count: no visitor, no identity, the address without its query.
 * An unknown organization is answered like a known one and nothing is stored.
 */
export async function recordCustomEvent(db: Db, input: CustomEventInput, opts: RecordOptions): Promise<CustomEventResult> {
  if (!(await countHit(db, input.org, opts))) return { recorded: false };
  const now = opts.clock.now();
  const u = new URL(input.url);
  const v = opts.anonymous
    ? { ...input, url: u.origin + u.pathname, visitor: null, email: null, contactId: null }
    : { ...input, url: withoutIdentity(input.url) };
  const orgId = v.org;
  return db.transaction(async (tx) => {
    const { contact, identified } = await contactOf(tx, orgId, v);
    if (contact && identified) await attachVisitor(tx, orgId, v.visitor!, contact.id);
    const id = randomUUID();
    await tx.run(q.INSERT_TRACKING_EVENT, {
      id,
      orgId,
      contactId: contact?.id ?? null,
      visitorId: v.visitor ?? null,
      name: v.name,
      props: JSON.stringify(v.props),
      url: v.url,
      now,
    });
    if (contact) {
      const customEvent = { name: v.name, props: v.props, url: v.url, visitorId: v.visitor! };
      const ref = { id: contact.id, firstName: contact.first_name, email: contact.email };
      await emitEvents(tx, [{ orgId, event: 'tracking.custom_event', source: 'inbound', data: { customEvent, contact: ref }, at: now }]);
    }
    return { recorded: true, id, contactId: contact?.id ?? null };
  });
}

export const GoalsInput = z.object({
  days: z.number().int().min(1).max(400, 'days must be at most 400').default(30).meta({
    description: 'The period: the last this many days up to now (default 30).',
  }),
});
export type GoalsInput = z.infer<typeof GoalsInput>;

export const Goals = z.object({
  since: z.iso.datetime(),
  items: z.array(
    z.object({
      name: z.string(),
      total: z.int().meta({ description: 'Custom events of this name in the period.' }),
      anonymous: z.int().meta({ description: 'Of which from visitors not known as contacts (GPC and DNT included).' }),
    }),
  ),
});
export type Goals = z.infer<typeof Goals>;

const DAY_MS = 86_400_000;

/** The website's goals: custom events of the period by name, most frequent first (at most 100 names). */
export async function goals(db: Db, orgId: string, now: Date, input: GoalsInput): Promise<Goals> {
  const since = new Date(now.getTime() - input.days * DAY_MS);
  const rows = await db.run(q.GOALS, { orgId, since, until: now });
  return { since: since.toISOString(), items: rows.map((r) => ({ name: r.name, total: Number(r.total), anonymous: Number(r.anonymous) })) };
}
