import { z } from 'zod';
import { EVENT_NAMES, type EventName } from '../../events/names.ts';
import { errors } from '../../errors.ts';
import { QueuedDelivery } from '../delivery/schemas.ts';

const isEventName = (name: string): name is EventName => (EVENT_NAMES as readonly string[]).includes(name);

/** Longest `events` query a stream accepts: every name of the catalogue, comma separated, and then some. */
const EVENTS_QUERY_MAX = 2048;

/**
 * The `events` query of a listen stream: a comma-separated list of catalogue names, or absent, empty or `*` for every
 * event. An unknown name is a 400 naming it, so a typo is not a silent stream of nothing.
 */
export function parseListenEvents(raw: string | undefined): EventName[] | null {
  if (raw === undefined || raw.trim() === '' || raw.trim() === '*') return null;
  if (raw.length > EVENTS_QUERY_MAX) {
    throw errors.validation(
      [{ path: 'events', message: `events must be at most ${EVENTS_QUERY_MAX} characters` }],
      'Validation failed: events is too long',
    );
  }
  const names = [
    ...new Set(
      raw
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    ),
  ];
  const unknown = names.filter((n) => !isEventName(n));
  if (unknown.length) {
    const list = unknown.map((n) => JSON.stringify(n.slice(0, 100))).join(', ');
    throw errors.validation(
      unknown.map((n) => ({ path: 'events', message: `Unknown event ${JSON.stringify(n.slice(0, 100))}` })),
      `Validation failed: unknown event ${list}; see the catalogue in the OpenAPI document's webhooks section`,
    );
  }
  return names as EventName[];
}

export const TriggerInput = z.object({
  event: z
    .enum(EVENT_NAMES as [EventName, ...EventName[]], {
      error: (iss) =>
        `Unknown event ${JSON.stringify(typeof iss.input === 'string' ? iss.input.slice(0, 100) : iss.input)}; one of: ${EVENT_NAMES.join(', ')}`,
    })
    .meta({ description: 'The event of the catalogue whose example to send.', example: 'contact.created' }),
  endpointId: z
    .uuid({ message: 'endpointId must be a webhook endpoint id (UUID)' })
    .optional()
    .meta({ description: 'Also deliver the example to this endpoint, as a manual delivery (one attempt).' }),
});
export type TriggerInput = z.infer<typeof TriggerInput>;

export const TriggerResult = z.object({
  id: z.uuid().meta({ description: "The example's id: the `id:` of its delivery on listen streams and its webhook-id there." }),
  event: z.string(),
  payload: z
    .object({
      id: z.uuid(),
      event: z.string(),
      timestamp: z.string(),
      source: z.string().optional(),
      data: z.record(z.string(), z.unknown()),
    })
    .meta({ description: "The catalogue's example of the event with a fresh id and the current time as its timestamp: what was sent." }),
  listening: z.boolean().meta({ description: 'Whether a listen stream of the organization was open on any server process.' }),
  delivery: QueuedDelivery.nullable().meta({ description: 'The manual delivery to `endpointId`; null without one.' }),
  synthetic: z.literal(true).meta({
    description:
      "Always true: the payload is the catalogue's example, so its record ids (the contact's, the deal's…) do not exist. Make a real change through the API for a real event.",
  }),
});
export type TriggerResult = z.infer<typeof TriggerResult>;
