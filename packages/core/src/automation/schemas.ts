import { z } from 'zod';
import { AUTOMATION_TRIGGERS } from '../events/names.ts';
import { EVENT_SOURCES } from '../events/outbox.ts';
import { EventId } from '../events/payload.ts';
import { IsoDateTime, text } from '../validation/index.ts';
import { WebhookUrl } from '../webhooks/endpoints/schemas.ts';

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
  enabled: z.boolean().meta({ description: 'False when the URL points at a private or internal address; nothing is sent then.' }),
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

/** A payload as delivered to hooks and webhooks (spec "Payload shape"). */
export const EventPayload = z.object({
  id: EventId,
  event: z.string(),
  timestamp: z.string().meta({ description: 'ISO 8601 UTC with milliseconds.' }),
  source: z.enum(EVENT_SOURCES).optional(),
  data: z.record(z.string(), z.unknown()),
});

export const TriggerDefinition = z.object({
  key: z.enum(AUTOMATION_TRIGGERS),
  label: z.string(),
  description: z.string(),
  sample: EventPayload,
});
export const TriggerList = z.array(TriggerDefinition);

export const SamplesInput = z.object({
  event: text(100).meta({ description: 'A trigger key.', example: 'contact.created' }),
});
export const SampleList = z.array(EventPayload).meta({
  description: "Up to 3 of the organization's latest payloads of this event, newest first; the catalogue sample when there are none.",
});

export const ActionInputDefinition = z.object({
  key: z.string(),
  label: z.string(),
  required: z.boolean().meta({ description: 'False for inputs of a `requiredAnyOf` group: one of them is required.' }),
  list: z.boolean().meta({ description: 'Takes several values (an array, or one comma-separated string).' }),
  description: z.string(),
});

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
