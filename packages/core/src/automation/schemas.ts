import { z } from 'zod';
import { AUTOMATION_TRIGGERS } from '../events/names.ts';
import { EVENT_SOURCES } from '../events/outbox.ts';
import { EventId } from '../events/payload.ts';
import { IsoDateTime, text } from '../validation/index.ts';
import { WebhookUrl } from '../webhooks/endpoints/schemas.ts';

export const POLL_LIMIT_DEFAULT = 25;
export const POLL_LIMIT_MAX = 100;

/** Messages name the input, so a platform shows "hookUrl is required" rather than a type error. */
export const required = (name: string, kind = 'text') => ({
  error: (iss: { input?: unknown }) => (iss.input === undefined || iss.input === null ? `${name} is required` : `${name} must be ${kind}`),
});

/** The webhook endpoints' URL rule (https only, no credentials, canonical form), so both kinds store URLs alike. */
const HookUrl = z.string(required('hookUrl')).pipe(WebhookUrl).meta({
  description: 'Where the platform receives the events: an https:// URL without credentials.',
  example: 'https://hooks.zapier.com/hooks/standard/1234567/abcdef/',
});

const TriggerEvent = z
  .enum(AUTOMATION_TRIGGERS, { error: () => `triggerEvent must be one of: ${AUTOMATION_TRIGGERS.join(', ')}` })
  .meta({ description: 'One trigger of GET /integrations/automation/triggers.', example: 'contact.created' });

export const SubscribeInput = z.object({
  hookUrl: HookUrl,
  triggerEvent: TriggerEvent,
});
export type SubscribeInput = z.infer<typeof SubscribeInput>;

export const Subscription = z.object({
  id: z.uuid().meta({ description: 'Pass it to DELETE /integrations/automation/subscribe/{id} to unsubscribe.' }),
  hookUrl: z.string(),
  triggerEvent: z.enum(AUTOMATION_TRIGGERS),
  secret: z.string().meta({ description: 'Signing secret (`whsec_...`) of the deliveries, as for webhook endpoints.' }),
  enabled: z.boolean().meta({
    description:
      'Whether deliveries are sent. A new subscription is always enabled (a hookUrl that can never be delivered to is refused: 422 `hook_url_refused`); repeated failed deliveries may disable it later, saying why in `disabledReason`.',
  }),
  disabledReason: z.string().nullable(),
  createdAt: IsoDateTime,
});
export type Subscription = z.infer<typeof Subscription>;

export const UnsubscribeInput = z.object({ id: z.uuid({ message: 'id must be a subscription id (UUID)' }) });

export const MeOutput = z.object({
  organization: z.object({ id: z.uuid(), name: z.string() }),
  user: z.object({ id: z.uuid(), email: z.string(), name: z.string().nullable() }),
  role: z.enum(['owner', 'admin', 'member']),
  via: z.enum(['session', 'internal_key']),
  label: z.string().meta({ description: 'A ready connection label: `<organization> (<user email>)`.', example: 'Acme (ada@acme.example)' }),
});
export type MeOutput = z.infer<typeof MeOutput>;

/** A payload as delivered to hooks and webhooks (spec "Payload shape"), with the event's id first. */
export const EventPayload = z.object({
  id: EventId,
  event: z.string(),
  timestamp: z.string().meta({ description: 'ISO 8601 UTC with milliseconds.' }),
  source: z.enum(EVENT_SOURCES).optional(),
  data: z.record(z.string(), z.unknown()),
});

export type EventPayload = z.infer<typeof EventPayload>;

export const TriggerDefinition = z.object({
  key: z.enum(AUTOMATION_TRIGGERS),
  label: z.string(),
  description: z.string(),
  sample: EventPayload.meta({
    description:
      "The event catalogue's example, to show the fields: its records do not exist (a lookup of its contact id is 404). Real payloads: `samplesUrl`.",
  }),
  sampleIsExample: z.literal(true).meta({ description: 'Always true: `sample` is a made-up example, never a real event.' }),
  samplesUrl: z.string().meta({ description: "Up to 3 of the organization's latest real payloads of the trigger; [] when it has none." }),
  pollUrl: z.string().meta({
    description:
      "A polling trigger's `performList`: the organization's latest events of the trigger, newest first, each with its `id` (de-duplicate on it).",
  }),
});
export type TriggerDefinition = z.infer<typeof TriggerDefinition>;
export const TriggerList = z.array(TriggerDefinition);

export const SamplesInput = z.object({
  event: text(100).meta({ description: 'A trigger key.', example: 'contact.created' }),
});
export const SampleList = z.array(EventPayload).meta({
  description: "Up to 3 of the organization's latest payloads of this event, newest first; an empty list when it has none.",
});

/** A `limit` query parameter. */
export const limitQuery = (def: number, max: number) =>
  z.coerce
    .number({ error: 'limit must be a whole number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(max, `limit may be at most ${max}`)
    .default(def)
    .meta({ description: `How many, default ${def}, at most ${max}.` });

export const PollInput = z.object({
  event: SamplesInput.shape.event,
  limit: limitQuery(POLL_LIMIT_DEFAULT, POLL_LIMIT_MAX),
});
export const PollList = z.array(EventPayload).meta({
  description:
    "The organization's latest events of the trigger, newest first (the order the changes feed gives them, reversed), among its newest 10,000 events of any kind by default (AUTOMATION_POLL_SCAN_EVENTS).",
});

export const DROPDOWN_SOURCES = ['pipelines', 'tags', 'companies'] as const;
export type DropdownSource = (typeof DROPDOWN_SOURCES)[number];

export const DropdownRef = z
  .object({
    source: z.enum(DROPDOWN_SOURCES),
    url: z.string().meta({ description: 'GET it for the choices: a list of objects.' }),
    value: z.string().meta({ description: "The field of each choice to send as the input's value." }),
    label: z.string().meta({ description: 'The field of each choice to show.' }),
  })
  .nullable()
  .meta({ description: 'Where a dynamic dropdown of this input gets its choices; null for free input.' });

export const ActionInputDefinition = z.object({
  key: z.string(),
  label: z.string(),
  required: z.boolean().meta({ description: 'False for inputs of a `requiredAnyOf` group: one of them is required.' }),
  list: z.boolean().meta({ description: 'Takes several values (an array, or one comma-separated string).' }),
  description: z.string(),
  dropdown: DropdownRef,
});
export type ActionInputDefinition = z.infer<typeof ActionInputDefinition>;

export const ActionDefinition = z.object({
  key: z.string(),
  label: z.string(),
  description: z.string(),
  required: z.array(z.string()).meta({ description: 'Inputs that must all be given.' }),
  requiredAnyOf: z.array(z.string()).meta({ description: 'When not empty, at least one of these inputs must be given.' }),
  optional: z.array(z.string()),
  inputs: z.array(ActionInputDefinition),
});
export type ActionDefinition = z.infer<typeof ActionDefinition>;
export const ActionList = z.array(ActionDefinition);

export const SearchDefinition = z.object({
  key: z.string(),
  label: z.string(),
  description: z.string(),
  url: z.string().meta({ description: 'GET it with the inputs as query parameters; the answer is a list of 0 or 1 records.' }),
  inputs: z.array(ActionInputDefinition),
  createAction: z.string().meta({ description: 'The action that creates what the search did not find (find-or-create).' }),
});
export const SearchList = z.array(SearchDefinition);
