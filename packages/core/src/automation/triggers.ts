import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import type { Config } from '../config.ts';
import { errors } from '../errors.ts';
import { EVENT_CATALOGUE, exampleFor } from '../events/catalogue.ts';
import { AUTOMATION_TRIGGERS, type AutomationTrigger } from '../events/names.ts';
import type { EventPayload as StoredPayload } from '../events/outbox.ts';
import { POLL_LIMIT_MAX, type TriggerDefinition } from './schemas.ts';
import * as q from './sql.ts';

/** How many real payloads a platform gets as samples: enough to pick fields from, few enough to read. */
const SAMPLE_COUNT = 3;

const BASE = '/integrations/automation';

/**
 * The spec's triggers with the catalogue's label, description and example payload. The example is marked as one
 * (`sampleIsExample`): its records do not exist, so a later step that looks its contact up gets 404. `poll` is the
 * ready URL of the trigger's polling route, for platforms that poll instead of (or besides) subscribing a hook.
 */
export function listTriggers(config: Pick<Config, 'BASE_URL'>): TriggerDefinition[] {
  return AUTOMATION_TRIGGERS.map((key) => {
    const def = EVENT_CATALOGUE[key];
    return {
      key,
      label: def.label,
      description: def.description,
      sample: exampleFor(key),
      sampleIsExample: true as const,
      samplesUrl: `${config.BASE_URL}${BASE}/triggers/${key}/samples`,
      pollUrl: `${config.BASE_URL}${BASE}/triggers/${key}/poll?limit=${POLL_LIMIT_MAX}`,
    };
  });
}

function requireTrigger(event: string): asserts event is AutomationTrigger {
  if (!(AUTOMATION_TRIGGERS as readonly string[]).includes(event)) {
    throw errors.notFound(`No trigger ${event}; GET ${BASE}/triggers lists them`);
  }
}

/**
 * The organization's latest events of `event`, newest first, each exactly as hooks receive it, with the event's id
 * first (the row's id, whether or not the stored payload already holds it): platforms de-duplicate on `id`.
 */
async function recentEvents(
  db: Db,
  config: Pick<Config, 'AUTOMATION_POLL_SCAN_EVENTS'>,
  actor: InternalActor,
  event: string,
  limit: number,
) {
  requireTrigger(event);
  const rows = await db.run(q.RECENT_EVENTS, { orgId: actor.orgId, event, scan: config.AUTOMATION_POLL_SCAN_EVENTS, limit });
  // The outbox keeps each payload as buildPayload made it.
  return rows.map((r) => ({ ...(r.payload as unknown as StoredPayload), id: r.id }));
}

/**
 * Up to 3 of the organization's latest payloads of `event`; an empty list when it has none yet. Never the catalogue's
 * example: its contact id answers 404 when a later step of the workflow uses it (the trigger list shows the example).
 */
export function triggerSamples(db: Db, config: Pick<Config, 'AUTOMATION_POLL_SCAN_EVENTS'>, actor: InternalActor, event: string) {
  return recentEvents(db, config, actor, event, SAMPLE_COUNT);
}

/** A polling trigger's `performList`: the latest `limit` events of the trigger, newest first, each with its `id`. */
export function pollTrigger(
  db: Db,
  config: Pick<Config, 'AUTOMATION_POLL_SCAN_EVENTS'>,
  actor: InternalActor,
  input: { event: string; limit: number },
) {
  return recentEvents(db, config, actor, input.event, input.limit);
}
