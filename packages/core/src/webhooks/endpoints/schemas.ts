import { z } from 'zod';
import { PageFields, pageOf } from '../../records/pagination.ts';
import { EVENT_NAMES, type EventName } from '../../events/names.ts';
import { IsoDateTime, text, urlText } from '../../validation/index.ts';
import { DeliveryFilterSchema } from './filter.ts';

/** Longer URLs are refused: browsers and proxies commonly cap near 2 KB, and a receiver URL has no reason to be longer. */
export const WEBHOOK_URL_MAX = 2048;

/**
 * Events an endpoint may subscribe to. `ping` is not among them: it is only ever sent to one endpoint by its test
 * button (`POST /api/webhooks/{id}/test`), never fanned out to subscribers.
 */
export const SUBSCRIBABLE_EVENTS = EVENT_NAMES.filter((e) => e !== 'ping') as readonly Exclude<EventName, 'ping'>[];
export const ALL_EVENTS = '*';

/**
 * An HTTPS receiver URL, stored in its canonical form (what `new URL(url).href` gives, i.e. what is requested). No
 * credentials: they would sit in the endpoint list and logs in the clear; receivers authenticate us by signature.
 */
export const WebhookUrl = urlText('url', WEBHOOK_URL_MAX)
  .min(1, 'url must not be empty')
  .transform((raw, ctx) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'url must be an absolute URL such as https://hooks.example.com/leadwire' });
      return z.NEVER;
    }
    if (u.protocol !== 'https:') {
      ctx.addIssue({
        code: 'custom',
        message: `url must use https:// (got ${u.protocol.slice(0, 20)}); webhooks are only sent over HTTPS`,
      });
      return z.NEVER;
    }
    if (u.username || u.password) {
      ctx.addIssue({ code: 'custom', message: 'url must not contain a user name or password; receivers verify the signature instead' });
      return z.NEVER;
    }
    if (u.href.length > WEBHOOK_URL_MAX) {
      ctx.addIssue({ code: 'custom', message: `url must be at most ${WEBHOOK_URL_MAX} characters once encoded` });
      return z.NEVER;
    }
    return u.href;
  })
  .meta({
    description: 'The receiver: an https:// URL without credentials, at most 2,048 characters.',
    example: 'https://hooks.example.com/leadwire',
  });

const EventList = z
  .array(z.enum([ALL_EVENTS, ...SUBSCRIBABLE_EVENTS], { message: `each event must be "*" or one of: ${SUBSCRIBABLE_EVENTS.join(', ')}` }))
  .min(1, 'events must name at least one event (or "*" for all)')
  .max(SUBSCRIBABLE_EVENTS.length, `events must name at most ${SUBSCRIBABLE_EVENTS.length} events`)
  .superRefine((events, ctx) => {
    if (events.includes(ALL_EVENTS) && events.length > 1) {
      ctx.addIssue({ code: 'custom', message: 'events: "*" already means every event; send it alone' });
    }
    const seen = new Set<string>();
    events.forEach((e, i) => {
      if (seen.has(e)) ctx.addIssue({ code: 'custom', path: [i], message: `${e} is listed twice` });
      seen.add(e);
    });
  })
  .meta({
    description:
      'Event names to deliver, each once; `["*"]` alone subscribes to every event of the catalogue, including event types added later: it is stored and returned as `["*"]`.',
    example: ['contact.created', 'contact.updated'],
  });

/**
 * What the `events` column holds for a list: `*` stays first, followed by the catalogue's names as this version knows
 * them. The outbox's dispatch trigger (on the /v1 write path, left as it is) matches an event by name in that column;
 * `refreshWildcards` rewrites the names at every start, so a type a later version adds reaches every `*` endpoint.
 */
export const storedEvents = (events: readonly string[]): string[] =>
  events[0] === ALL_EVENTS ? [ALL_EVENTS, ...SUBSCRIBABLE_EVENTS] : [...events];
/** The column as the API shows it: `["*"]` for every event. */
export const shownEvents = (stored: readonly string[]): string[] => (stored[0] === ALL_EVENTS ? [ALL_EVENTS] : [...stored]);

const Description = text(500).nullish().meta({ description: 'A note for your team, at most 500 characters.', example: 'CRM sync' });

export const WebhookEndpointView = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z
    .array(z.string())
    .meta({ description: 'The event names delivered; `["*"]`: every event of the catalogue, including types added later.' }),
  description: z.string().nullable(),
  filter: z
    .record(z.string(), z.unknown())
    .nullable()
    .meta({
      description:
        'Which of the subscribed events are delivered, by their `data`; null: all of them (docs/webhooks.md, "Filtering deliveries").',
      example: { 'contact.tags': 'vip' },
    }),
  enabled: z.boolean(),
  disabledReason: z.string().nullable().meta({ description: 'Why the endpoint is disabled; null while enabled.' }),
  failureCount: z.number().int().meta({ description: 'Failed automatic attempts in a row; 10 disable the endpoint.' }),
  secret: z.string().meta({ description: 'The signing secret (`whsec_...`); shown to owners and admins.' }),
  previousSecretExpiresAt: IsoDateTime.nullable().meta({
    description: 'After a rotation: until when deliveries also carry a Standard Webhooks signature made with the previous secret.',
  }),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});
export type WebhookEndpointView = z.infer<typeof WebhookEndpointView>;

const Filter = DeliveryFilterSchema.nullish();

export const WebhookEndpointCreateInput = z.object({ url: WebhookUrl, events: EventList, description: Description, filter: Filter });
export type WebhookEndpointCreateInput = z.infer<typeof WebhookEndpointCreateInput>;

const EndpointId = z.uuid({ message: 'id must be a webhook endpoint id (UUID)' });
export const WebhookEndpointIdInput = z.object({ id: EndpointId });

export const WebhookEndpointUpdateInput = z.object({
  id: EndpointId,
  url: WebhookUrl.optional().meta({ description: 'A new URL is checked again; a private or internal address disables the endpoint.' }),
  events: EventList.optional(),
  description: Description.meta({ description: 'null clears it.' }),
  filter: Filter.meta({ description: 'Replaces the filter; null removes it (every subscribed event is delivered again).' }),
});
export type WebhookEndpointUpdateInput = z.infer<typeof WebhookEndpointUpdateInput>;

export const WebhookEndpointListInput = z.object({ ...PageFields });
export type WebhookEndpointListInput = z.infer<typeof WebhookEndpointListInput>;
export const WebhookEndpointPage = pageOf(WebhookEndpointView);

export const RotatedSecret = z.object({
  secret: z.string().meta({ description: 'The new signing secret; the previous one is still signed with for 24 hours.' }),
  previousSecretExpiresAt: IsoDateTime,
});
