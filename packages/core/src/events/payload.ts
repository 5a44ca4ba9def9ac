import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ContactView } from './records.ts';
import { EVENT_GROUPS, type EventName } from './names.ts';
import { EVENT_SOURCES, type EventPayload, type EventSource } from './outbox.ts';

/** Spec "Payload shape": ISO 8601 UTC with exactly three fraction digits and `Z`, what `Date#toISOString` writes. */
export const EventTimestamp = z.iso
  .datetime({ precision: 3 })
  .meta({ description: 'When the change happened: ISO 8601 UTC with milliseconds.', example: '2026-11-22T14:03:07.123Z' });

export const EventId = z.uuid().meta({
  description: "The event's id: the same in every attempt, redelivery, recovery, the changes feed and listen streams; de-duplicate on it.",
  example: '9c1f4e2a-7b3d-4a58-8e6f-0d2c1b3a4e5f',
});

/**
 * The fixed id of an example: derived from the event name, so the document is the same on every build and no two
 * events' examples share one (a receiver de-duplicating on `id` keeps them all).
 */
export function exampleEventId(name: string): string {
  const h = createHash('sha256').update(`leadwire example event ${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const EventSourceSchema = z.enum(EVENT_SOURCES).meta({
  description: 'Who made the change, so a receiver can ignore changes its own integration made (`api` is /v1, `app` the application).',
});

/** The contact of contact events (`toEventContact`): the public view plus origin, company and times. */
export const EventContact = ContactView.extend({
  source: z.string().meta({ description: 'Origin of the record, set when it was created.' }),
  companyId: z.uuid().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
}).meta({ description: 'The contact after the change.' });
export type EventContact = z.infer<typeof EventContact>;

/** The short contact reference other records' events carry (messages, conversations). */
export const EventContactRef = z
  .object({ id: z.uuid(), firstName: z.string().nullable(), email: z.string().nullable() })
  .meta({ description: 'The contact the record belongs to.' });

export type EventGroup = keyof typeof EVENT_GROUPS;

const GROUP_OF = new Map<EventName, EventGroup>(
  Object.entries(EVENT_GROUPS).flatMap(([group, names]) => names.map((n) => [n, group as EventGroup])),
);
export const groupOf = (name: EventName): EventGroup => GROUP_OF.get(name)!;

/** One event of the catalogue: what it means, the shape of its `data`, and a whole payload as a receiver gets it. */
export interface EventDefinition<N extends EventName = EventName, D extends z.ZodObject = z.ZodObject> {
  name: N;
  group: EventGroup;
  /** Human name, e.g. "Contact created" (automation platforms show it). */
  label: string;
  description: string;
  /** Shape of the payload's `data` (typed per event, so the SDK's `WebhookEvent` derives from it). */
  data: D;
  /** The whole payload: `{ id, event, timestamp, source, data }` (`ping`: no `source`). */
  payload: z.ZodObject;
  example: EventPayload;
}

/** The fixed instant of every example, so the document is the same on every build. */
export const EXAMPLE_TIMESTAMP = '2026-11-22T14:03:07.123Z';

/**
 * Builds a definition. `source` is the source of the example (null only for `ping`, which has none); the example data
 * is parsed by the data schema here, so an example that drifts from its schema fails at start-up, not in a receiver.
 */
export function defineEvent<N extends EventName, D extends z.ZodObject>(def: {
  name: N;
  label: string;
  description: string;
  data: D;
  source: EventSource | null;
  exampleData: z.input<D>;
}): EventDefinition<N, D> {
  const payload = z.strictObject({
    id: EventId,
    event: z.literal(def.name).meta({ description: 'The event name.' }),
    timestamp: EventTimestamp,
    ...(def.source === null ? {} : { source: EventSourceSchema }),
    data: def.data,
  });
  const example: EventPayload = {
    id: exampleEventId(def.name),
    event: def.name,
    timestamp: EXAMPLE_TIMESTAMP,
    ...(def.source === null ? {} : { source: def.source }),
    data: def.data.parse(def.exampleData),
  };
  return { name: def.name, group: groupOf(def.name), label: def.label, description: def.description, data: def.data, payload, example };
}

/** Ids the examples share, so that one example's contact is the next one's contact too. */
export const EX = {
  org: '5b1d8e52-3f0c-4f0e-9a57-0b8a3c2d7e11',
  contact: '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10',
  contact2: '8e4b7d21-6c5a-4f39-b2d8-1a9c0e3f5b72',
  company: 'c7a1e9d3-2b4f-4a6c-8e0d-5f3b1a7c9e24',
  user: 'a2d4f6b8-1c3e-4a5b-9d7f-0e2c4a6b8d13',
  deal: 'd1e2f3a4-b5c6-4d7e-8f9a-0b1c2d3e4f56',
  pipeline: 'e9f8a7b6-c5d4-4e3f-a2b1-0c9d8e7f6a54',
  stage1: 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a51',
  stage2: 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a52',
  task: 'b3c4d5e6-f7a8-4b9c-8d0e-1f2a3b4c5d67',
  booking: 'c4d5e6f7-a8b9-4c0d-9e1f-2a3b4c5d6e78',
  conversation: 'd5e6f7a8-b9c0-4d1e-8f2a-3b4c5d6e7f89',
  message: 'e6f7a8b9-c0d1-4e2f-9a3b-4c5d6e7f8a90',
  aiAction: 'f7a8b9c0-d1e2-4f3a-8b4c-5d6e7f8a9b01',
  form: 'a8b9c0d1-e2f3-4a4b-9c5d-6e7f8a9b0c12',
  submission: 'b9c0d1e2-f3a4-4b5c-8d6e-7f8a9b0c1d23',
  verification: 'c0d1e2f3-a4b5-4c6d-9e7f-8a9b0c1d2e34',
} as const;

export const EXAMPLE_CONTACT: EventContact = {
  id: EX.contact,
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  phone: '+44 20 7946 0018',
  jobTitle: 'Head of Engineering',
  tags: ['vip', 'newsletter'],
  leadScore: 55,
  stage: 'qualified',
  source: 'webinar-2026',
  companyId: EX.company,
  createdAt: '2026-11-20T09:15:42.301Z',
  updatedAt: EXAMPLE_TIMESTAMP,
};

export const EXAMPLE_CONTACT_REF = { id: EX.contact, firstName: 'Ada', email: 'ada@example.com' };

/**
 * What the first delivery after an endpoint missed events adds to the payload (webhooks/delivery/gap.ts): how many, and
 * the changes-feed cursor just before the first of them.
 */
export const DeliveryGap = z
  .object({
    skipped: z.int().min(1).meta({
      description:
        'How many events this endpoint missed since its previous delivery: skipped over the 1,000 deliveries per hour limit or while the endpoint was disabled.',
      example: 37,
    }),
    after: z.string().meta({
      description:
        "A changes-feed cursor just before the first missed event: `GET /v1/events?after=<after>&types=<your events>` lists the missed events first; read on up to this delivery's `id` to catch up.",
      example: 'MTo4MTQ0Nzo5MDIx',
    }),
  })
  .meta({
    description:
      'Present only on the first delivery after the endpoint missed events; absent otherwise. Sent and signed as part of the body, so every attempt and redelivery of this delivery carries it.',
  });
export type DeliveryGap = z.infer<typeof DeliveryGap>;
