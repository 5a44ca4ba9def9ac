import { z } from 'zod';
import { EX, EXAMPLE_CONTACT, EXAMPLE_TIMESTAMP, EventSourceSchema, EventTimestamp } from '../events/payload.ts';
import { EVENT_NAMES, type EventName } from '../events/names.ts';
import { encodeFeedCursor } from './cursor.ts';

export const FEED_PAGE_MAX = 100;
export const FEED_PAGE_DEFAULT = 25;

/** A cursor as this API writes them, for the examples (transaction 48213, event 907311). */
const EXAMPLE_CURSOR = encodeFeedCursor({ txid: '48213', seq: '907311' });
const EXAMPLE_NEXT = encodeFeedCursor({ txid: '48219', seq: '907342' });

const isEventName = (s: string): s is EventName => (EVENT_NAMES as readonly string[]).includes(s);

export const FeedListInput = z.strictObject({
  after: z.string().max(64, 'must be at most 64 characters').optional().meta({
    description:
      "Where to start: `nextCursor` of a previous page (the events after it), or `now` (only events that commit from now on: a tail's start). Omitted: from the oldest event kept. A cursor stays valid as long as the events are kept, for a key with any permission set.",
    example: EXAMPLE_CURSOR,
  }),
  types: z
    .string()
    .max(2000, 'must be at most 2000 characters')
    .transform((s, ctx): EventName[] => {
      const names = s.split(',').map((n) => n.trim());
      for (const n of names) {
        if (!isEventName(n)) {
          ctx.addIssue({
            code: 'custom',
            message: n === '' ? 'an empty event name (e.g. a trailing comma)' : `unknown event name ${JSON.stringify(n)}`,
          });
          return z.NEVER;
        }
      }
      return [...new Set(names)] as EventName[];
    })
    .optional()
    .meta({
      description:
        'Only these events: names of the event catalogue, comma-separated (`contact.created,contact.deleted`). Omitted: every event the key may read. A key with `contacts:read` but not `events:read` reads the contact events (`contact.*`) only.',
      example: 'contact.created,contact.updated,contact.deleted',
    }),
  limit: z.coerce
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(FEED_PAGE_MAX, `limit may be at most ${FEED_PAGE_MAX} events per page`)
    .default(FEED_PAGE_DEFAULT)
    .meta({ description: `Page size, default ${FEED_PAGE_DEFAULT}, at most ${FEED_PAGE_MAX}.` }),
});
export type FeedListInput = z.infer<typeof FeedListInput>;

/**
 * One event as webhooks carry it. Loose on purpose: these are stored payloads, written by the catalogue of the day
 * they happened, and a page must never fail on an old one. Each name's `data` is specified under `webhooks`.
 */
export const FeedItem = z
  .object({
    id: z.uuid().meta({
      description:
        "The event's id: the same in every attempt, redelivery, recovery, the changes feed and listen streams; de-duplicate on it.",
    }),
    event: z.enum(EVENT_NAMES).meta({ description: 'The event name (see the catalogue under `webhooks`).' }),
    timestamp: EventTimestamp,
    source: EventSourceSchema.optional(),
    data: z.record(z.string(), z.unknown()).meta({ description: "The event's data, as its webhook carries it." }),
  })
  .meta({ id: 'FeedEvent', description: 'An event, exactly as its webhook delivery carries it.' });

export const FeedListOutput = z
  .object({
    items: z.array(FeedItem).meta({ description: 'Events in commit order (the order of the feed), oldest first.' }),
    nextCursor: z.string().meta({
      description:
        'Pass as `after` to continue. Never null: after an empty or last page it still moves forward (to the oldest transaction still running), so keep it and poll with it.',
      example: EXAMPLE_NEXT,
    }),
    hasMore: z.boolean().meta({
      description:
        'True: more events may be read now; call again at once with `nextCursor` (a page filtered by `types` can be short, even empty, and still say true). False: caught up; poll later with `nextCursor`.',
    }),
  })
  .meta({
    example: {
      items: [
        {
          id: '9d3b5a71-4c2e-4f80-b6a1-2e7c8d9f0a13',
          event: 'contact.updated',
          timestamp: EXAMPLE_TIMESTAMP,
          source: 'app',
          data: { contact: EXAMPLE_CONTACT, mergedIds: [EX.contact2] },
        },
        {
          id: '2f6e8c1d-7b3a-4e95-a0c4-5d1f2b3e4a68',
          event: 'contact.deleted',
          timestamp: EXAMPLE_TIMESTAMP,
          source: 'app',
          data: {
            contact: { ...EXAMPLE_CONTACT, id: EX.contact2, email: 'ada.lovelace@example.org', tags: ['webinar'] },
            mergedInto: EX.contact,
          },
        },
      ],
      nextCursor: EXAMPLE_NEXT,
      hasMore: false,
    },
  });
export type FeedListOutput = z.infer<typeof FeedListOutput>;
