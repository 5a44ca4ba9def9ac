import type { z } from 'zod';
import { activityEvents } from './groups/activity.ts';
import { captureEvents } from './groups/capture.ts';
import { contactEvents } from './groups/contacts.ts';
import { dealEvents } from './groups/deals.ts';
import { workspaceEvents } from './groups/workspace.ts';
import { EVENT_NAMES, type EventName } from './names.ts';
import type { EventPayload } from './outbox.ts';
import type { EventDefinition } from './payload.ts';

export { EventContact, EventContactRef, EventTimestamp, type EventDefinition, type EventGroup } from './payload.ts';
export { PING_MESSAGE } from './groups/workspace.ts';

const ALL: readonly EventDefinition[] = [...contactEvents, ...dealEvents, ...activityEvents, ...captureEvents, ...workspaceEvents];

function byName(): Record<EventName, EventDefinition> {
  const out = Object.fromEntries(ALL.map((d) => [d.name, d])) as Record<EventName, EventDefinition>;
  // A name of the spec without a definition (or a definition twice) is a bug to catch at load, not in a receiver.
  const missing = EVENT_NAMES.filter((n) => !out[n]);
  if (missing.length || ALL.length !== EVENT_NAMES.length) throw new Error(`event catalogue out of step with names.ts: ${missing.join(', ')}`);
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

/** Parses a payload as the catalogue describes it (unknown event names fail); the zod result as is. */
export function parsePayload(payload: unknown): z.ZodSafeParseResult<unknown> | null {
  const name = (payload as { event?: unknown } | null)?.event;
  const def = typeof name === 'string' ? EVENT_CATALOGUE[name as EventName] : undefined;
  return def ? def.payload.safeParse(payload) : null;
}
