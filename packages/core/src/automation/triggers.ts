import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { errors } from '../errors.ts';
import { EVENT_CATALOGUE, exampleFor } from '../events/catalogue.ts';
import { AUTOMATION_TRIGGERS, type AutomationTrigger } from '../events/names.ts';
import type { EventPayload } from '../events/outbox.ts';
import * as q from './sql.ts';

/** How many real payloads a platform gets as samples: enough to pick fields from, few enough to read. */
const SAMPLE_COUNT = 3;

/** The spec's triggers with the catalogue's label, description and example payload. */
export function listTriggers() {
  return AUTOMATION_TRIGGERS.map((key) => {
    const def = EVENT_CATALOGUE[key];
    return { key, label: def.label, description: def.description, sample: exampleFor(key) };
  });
}

const isTrigger = (event: string): event is AutomationTrigger => (AUTOMATION_TRIGGERS as readonly string[]).includes(event);

/**
 * The organization's latest payloads of `event`, newest first, exactly as hooks receive them (the outbox keeps them
 * whole); the catalogue's example when the organization has none yet, so a platform always has fields to map.
 */
export async function triggerSamples(db: Db, actor: InternalActor, event: string): Promise<EventPayload[]> {
  if (!isTrigger(event)) throw errors.notFound(`No trigger ${event}; GET /integrations/automation/triggers lists them`);
  const rows = await db.run(q.RECENT_PAYLOADS, { orgId: actor.orgId, event, limit: SAMPLE_COUNT });
  // The outbox keeps each payload as buildPayload made it.
  return rows.length ? rows.map((r) => r.payload as unknown as EventPayload) : [exampleFor(event)];
}
