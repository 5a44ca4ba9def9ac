import { activityEvents } from './groups/activity.ts';
import { captureEvents } from './groups/capture.ts';
import { contactEvents } from './groups/contacts.ts';
import { dealEvents } from './groups/deals.ts';
import { webhookEvents } from './groups/webhooks.ts';
import { workspaceEvents } from './groups/workspace.ts';
import { EVENT_NAMES, type EventName } from './names.ts';
import type { EventPayload } from './outbox.ts';
import type { EventDefinition } from './payload.ts';

export type { EventDefinition } from './payload.ts';
export { PING_MESSAGE } from './groups/workspace.ts';

const DEFINITIONS = [...contactEvents, ...dealEvents, ...activityEvents, ...captureEvents, ...workspaceEvents, ...webhookEvents] as const;
/** The definition of every event with its own name and `data` schema: `@leadwire/sdk` derives its event types from it. */
export type AnyEventDefinition = (typeof DEFINITIONS)[number];
const ALL: readonly EventDefinition[] = DEFINITIONS;

function byName(): Record<EventName, EventDefinition> {
  const out = Object.fromEntries(ALL.map((d) => [d.name, d])) as Record<EventName, EventDefinition>;
  // A name of the spec without a definition (or a definition twice) is a bug to catch at load, not in a receiver.
  const missing = EVENT_NAMES.filter((n) => !out[n]);
  if (missing.length || ALL.length !== EVENT_NAMES.length)
    throw new Error(`event catalogue out of step with names.ts: ${missing.join(', ')}`);
  return out;
}

/**
 * Every event of the spec's catalogue, in the spec's order: its label and description, the zod schema of its `data`
 * and of the whole payload, and an example payload. Automation triggers, the OpenAPI `webhooks` section and the
 * catalogue test all read it.
 */
export const EVENT_CATALOGUE: Readonly<Record<EventName, EventDefinition>> = byName();

/** A whole example payload of `name` (a fresh copy, safe to change). */
export function exampleFor(name: EventName): EventPayload {
  return structuredClone(EVENT_CATALOGUE[name].example);
}
