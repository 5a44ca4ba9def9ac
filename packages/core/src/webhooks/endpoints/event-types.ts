import { z } from 'zod';
import { internalProcedure } from '../../auth/internal.ts';
import { EVENT_CATALOGUE } from '../../events/catalogue.ts';
import { EVENT_GROUPS, EVENT_NAMES } from '../../events/names.ts';
import { INTERNAL_ERRORS } from '../../errors/surfaces.ts';
import { SUBSCRIBABLE_EVENTS } from './schemas.ts';

export const EventType = z.object({
  name: z.string().meta({ example: 'contact.created' }),
  group: z.enum(Object.keys(EVENT_GROUPS) as [keyof typeof EVENT_GROUPS]).meta({ description: 'The catalogue group it is listed under.' }),
  label: z.string().meta({ example: 'Contact created' }),
  description: z.string(),
  subscribable: z.boolean().meta({
    description: 'Whether an endpoint may list it in `events`; false only for `ping`, which the test button sends to one endpoint.',
  }),
  example: z
    .object({
      id: z.uuid(),
      event: z.string(),
      timestamp: z.string(),
      source: z.string().optional(),
      data: z.record(z.string(), z.unknown()),
    })
    .meta({ description: 'A whole payload as a receiver gets it; made up, its records do not exist.' }),
});
export type EventType = z.infer<typeof EventType>;

const SUBSCRIBABLE = new Set<string>(SUBSCRIBABLE_EVENTS);

/** The catalogue in the spec's order, built once: it is fixed for the life of the process. */
const EVENT_TYPES: EventType[] = EVENT_NAMES.map((name) => {
  const def = EVENT_CATALOGUE[name];
  return {
    name,
    group: def.group,
    label: def.label,
    description: def.description,
    subscribable: SUBSCRIBABLE.has(name),
    example: structuredClone(def.example),
  };
});

/**
 * `GET /api/webhooks/event-types`: what an endpoint can subscribe to, for the console's event picker. Any signed-in
 * person may read it (it is the published catalogue, nothing of the workspace's); managing endpoints stays with owners
 * and admins. Listed before `/webhooks/{id}` so that path never reads `event-types` as an id.
 */
export const eventTypeProcedures = {
  eventTypes: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/event-types',
        tags: ['Webhooks'],
        summary: 'The event catalogue: every event with its description and an example payload',
      },
      errorCodes: INTERNAL_ERRORS,
    })
    .input(z.void())
    .output(z.array(EventType))
    .query(() => EVENT_TYPES),
};
