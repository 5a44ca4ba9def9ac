import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Organization } from './organization.ts';

/** The channel the outbox trigger notifies on; the payload is `{"o": organization id, "ids": [event ids]}`. */
export const LISTEN_CHANNEL = 'leadwire_listen';

const LISTEN_TRIGGER_DDL = `create trigger "outbox_events_listen" after insert on "outbox_events" referencing new table as "inserted"
for each statement execute function "outbox_events_outbox_events_listen_fn"()`;

const PENDING_TRIGGER_DDL = `create trigger "outbox_events_pending" after insert on "outbox_events" referencing new table as "inserted"
for each statement execute function "outbox_events_outbox_events_pending_fn"()`;

/**
 * Events written in the same transaction as the change they describe (transactional outbox): a rolled-back write
 * emits nothing, a committed one is never lost. Rows are written once and never updated: what is still to dispatch is
 * listed in `outbox_pending` (below), so dispatching rewrites no payload and adds no index entries here.
 */
export const OutboxEventSchema = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_events',
  indexes: [
    {
      // The changes feed (GET /v1/events) pages each organization's events in feed order, index only up to the rows.
      name: 'outbox_events_feed_idx',
      properties: ['organization', 'txid', 'seq'],
    },
    {
      // Contact timelines and the trash purge look events up by the contact they are about.
      name: 'outbox_events_contact_idx',
      expression: `create index "outbox_events_contact_idx" on "outbox_events" ("organization_id", (("payload"->'data'->'contact'->>'id')))`,
    },
    // Retention's look-up by age (Migration20261126110000): a range summary, no B-tree entry per insert.
    {
      name: 'outbox_events_created_brin',
      expression: `create index "outbox_events_created_brin" on "outbox_events" using brin ("created_at") with (autosummarize = on)`,
    },
  ],
  // `leadwire listen`: new events of organizations someone listens to are announced by NOTIFY (their ids, in chunks);
  // the DDL lives in the migration Migration20261123100000.
  // Every event inserted, by whichever statement, is queued for dispatch in the same transaction (Migration20261123110000)
  // when an endpoint subscribes to it (Migration20261126121000).
  triggers: [
    { name: 'outbox_events_listen', timing: 'after', events: ['insert'], forEach: 'statement', expression: LISTEN_TRIGGER_DDL },
    { name: 'outbox_events_pending', timing: 'after', events: ['insert'], forEach: 'statement', expression: PENDING_TRIGGER_DDL },
  ],
  properties: {
    ...baseProperties,
    // No index of its own: outbox_events_contact_idx leads with the organization.
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    event: p.text(),
    /** The payload exactly as it will be delivered: { id, event, timestamp, source?, data }. */
    payload: p.json<Record<string, unknown>>(),
    /**
     * The writing transaction's id (the changes feed's order): every transaction below the oldest one still running
     * has ended, so a reader that stops at that horizon never passes a row that commits later. Set by the database.
     */
    txid: p.string().columnType('xid8').defaultRaw('pg_current_xact_id()'),
    /** Insertion order within a transaction (and the tiebreak of the feed's order). Set by the database. */
    seq: p.bigint('string').autoincrement(),
    /**
     * The id of the HTTP request whose transaction wrote the event (its `x-request-id`), null for events no request
     * wrote (workers, schedules): what lets a delivery and its attempts' log lines lead back to the request. Only read
     * through the event's id, so no index.
     */
    requestId: p.text().nullable(),
  },
});
export class OutboxEvent extends OutboxEventSchema.class {}
OutboxEventSchema.setClass(OutboxEvent);

/**
 * The events not yet dispatched, oldest first: a row per event that an endpoint of its organization subscribes to
 * (Migration20261126121000; the others have nowhere to go), added by the outbox's insert trigger and deleted by
 * the dispatch round that claims it. Small rows in a small table; no foreign key, so queueing an event costs no lookup
 * of its outbox row (a row whose event is gone, e.g. with its organization, is claimed and dropped). One index, the
 * primary key in claim order (Migration20261126120000): a second index was a second B-tree
 * insert and delete for every event.
 */
export const OutboxPendingSchema = defineEntity({
  name: 'OutboxPending',
  tableName: 'outbox_pending',
  properties: {
    /** The event's own created_at: dispatch order. */
    createdAt: p.datetime().primary(),
    eventId: p.uuid().primary(),
  },
});
export class OutboxPending extends OutboxPendingSchema.class {}
OutboxPendingSchema.setClass(OutboxPending);
