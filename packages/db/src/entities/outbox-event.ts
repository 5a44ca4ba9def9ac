import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Organization } from './organization.ts';

/** The channel the outbox trigger notifies on; the payload is `{"o": organization id, "ids": [event ids]}`. */
export const LISTEN_CHANNEL = 'leadwire_listen';

const LISTEN_TRIGGER_DDL = `create trigger "outbox_events_listen" after insert on "outbox_events" referencing new table as "inserted"
for each statement execute function "outbox_events_outbox_events_listen_fn"()`;

/**
 * Events written in the same transaction as the change they describe (transactional outbox): a rolled-back write
 * emits nothing, a committed one is never lost. The webhook dispatcher reads undispatched rows in order.
 */
export const OutboxEventSchema = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_events',
  indexes: [
    {
      // Contact timelines and the trash purge look events up by the contact they are about.
      name: 'outbox_events_contact_idx',
      expression:
        `create index "outbox_events_contact_idx" on "outbox_events" ("organization_id", (("payload"->'data'->'contact'->>'id')))`,
    },
    {
      name: 'outbox_events_pending_idx',
      expression:
        'create index "outbox_events_pending_idx" on "outbox_events" ("created_at") where "dispatched_at" is null',
    },
  ],
  // `leadwire listen`: new events of organizations someone listens to are announced by NOTIFY (their ids, in chunks);
  // the DDL lives in the migration Migration20261123100000.
  triggers: [{ name: 'outbox_events_listen', timing: 'after', events: ['insert'], forEach: 'statement', expression: LISTEN_TRIGGER_DDL }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    event: p.text(),
    /** The payload exactly as it will be delivered: { event, timestamp, source?, data }. */
    payload: p.json<Record<string, unknown>>(),
    dispatchedAt: p.datetime().nullable(),
  },
});
export class OutboxEvent extends OutboxEventSchema.class {}
OutboxEventSchema.setClass(OutboxEvent);
