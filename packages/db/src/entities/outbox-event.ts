import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Organization } from './organization.ts';

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
