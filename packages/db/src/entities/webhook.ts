import { defineEntity, p } from '@mikro-orm/core';
import { ApiKey } from './api-key.ts';
import { baseProperties, timestamps } from './base.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

/**
 * Where events go: a webhook endpoint an owner or admin registered (`endpoint`), or an automation platform's REST hook
 * (`rest_hook`, one trigger event, subscribed with an Internal key). Both are delivered by the same engine with the
 * same signatures, retries, limits and address rules.
 */
export const WebhookEndpointSchema = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  indexes: [{ name: 'webhook_endpoints_org_kind_idx', properties: ['organization', 'kind'] }],
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    kind: p.enum(['endpoint', 'rest_hook'] as const).default('endpoint'),
    url: p.text(),
    /** Subscribed event names (a REST hook has exactly one). */
    events: p.array().default([]),
    description: p.text().nullable(),
    /** Which events of `events` are delivered, by their `data` (core webhooks/endpoints/filter.ts); null: all of them. */
    filter: p.json<Record<string, unknown>>().nullable(),
    enabled: p.boolean().default(true),
    disabledReason: p.text().nullable(),
    /** Failed automatic attempts in a row; 10 disable the endpoint, enabling resets it. */
    failureCount: p.integer().default(0),
    /** `whsec_` + base64 of random bytes. */
    secret: p.text(),
    /** The secret before the last rotation, still signed with (Standard Webhooks header) until the grace period ends. */
    previousSecret: p.text().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    createdBy: () => p.manyToOne(User).nullable().deleteRule('set null'),
    /** The Internal key that subscribed a REST hook. */
    apiKey: () => p.manyToOne(ApiKey).nullable().deleteRule('set null'),
    /**
     * Events missed (skipped over the hourly limit or while disabled) since the endpoint's last automatic delivery;
     * the next one carries them as `gap` and sets this back to 0 (delivery/gap.ts).
     */
    gapSkipped: p.integer().default(0),
    /** The changes-feed place (txid, seq) of the earliest missed event; null while nothing is missed. */
    gapTxid: p.string().columnType('xid8').nullable(),
    gapSeq: p.bigint('string').nullable(),
  },
});
export class WebhookEndpoint extends WebhookEndpointSchema.class {}
WebhookEndpointSchema.setClass(WebhookEndpoint);

/**
 * One event to one endpoint: its exact bytes and where it stands. Delivery state lives here, apart from the event
 * record (outbox_events) that timelines read, so pruning delivery logs never erases history.
 */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  indexes: [
    { name: 'webhook_deliveries_endpoint_idx', properties: ['endpoint', 'createdAt'] },
    { name: 'webhook_deliveries_org_created_idx', properties: ['organization', 'createdAt'] },
    {
      // The sweeper's look-up: due attempts and expired leases.
      name: 'webhook_deliveries_due_idx',
      expression: `create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where "state" in ('pending', 'in_flight')`,
    },
    // Retention's look-up by age (Migration20261126110000): a range summary, no B-tree entry per insert.
    {
      name: 'webhook_deliveries_created_brin',
      expression: `create index "webhook_deliveries_created_brin" on "webhook_deliveries" using brin ("created_at") with (autosummarize = on)`,
    },
  ],
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    endpoint: () => p.manyToOne(WebhookEndpoint).deleteRule('cascade'),
    /** The outbox event delivered (no foreign key: the event record may be purged with its contact first). */
    eventId: p.uuid().nullable(),
    event: p.text(),
    /** The exact JSON sent on every attempt. */
    body: p.text(),
    state: p.enum(['pending', 'in_flight', 'succeeded', 'failed', 'skipped', 'filtered'] as const).default('pending'),
    /** Attempts made so far. */
    attempts: p.integer().default(0),
    /** A manual replay (redeliver, recover): one attempt, not counted toward disabling. */
    manual: p.boolean().default(false),
    replayOf: p.uuid().nullable(),
    /**
     * The Standard Webhooks `webhook-id` when it is not this delivery's own id: a replay (redeliver, recover) keeps the
     * one its original was sent with, so a receiver de-duplicating on it sees one message.
     */
    messageId: p.uuid().nullable(),
    /** When the next attempt is due (pending), or when an in-flight attempt's lease ends (in_flight). */
    nextAttemptAt: p.datetime().nullable(),
    firstAttemptAt: p.datetime().nullable(),
    /** Set each time an attempt is handed to the queue: a job whose token no longer matches is stale and dropped. */
    leaseToken: p.uuid().nullable(),
    /** The worker process running the in-flight attempt (it holds an advisory lock on this key while alive). */
    workerKey: p.bigint('number').nullable(),
    /** Why a skipped (or filtered) delivery was not sent (rate limit, endpoint disabled, the endpoint's filter). */
    skipReason: p.text().nullable(),
  },
});
export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);

/** The delivery log: one row per attempt (and one per skipped delivery), as the endpoint screen lists it. */
export const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  indexes: [{ name: 'webhook_attempts_endpoint_idx', properties: ['endpoint', 'createdAt'] }],
  properties: {
    /** Also the attempt's `X-Webhook-Id`. */
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    endpoint: () => p.manyToOne(WebhookEndpoint).deleteRule('cascade'),
    delivery: () => p.manyToOne(WebhookDelivery).deleteRule('cascade').index(),
    event: p.text(),
    /** 1-based; 0 for a delivery skipped before any attempt. */
    attempt: p.integer(),
    outcome: p.enum(['succeeded', 'failed', 'blocked', 'skipped', 'filtered'] as const),
    statusCode: p.integer().nullable(),
    /** The start of the receiver's answer (first 1,024 characters). */
    responseBody: p.text().nullable(),
    /** Where the attempt went (the endpoint's URL then), and its headers exactly as sent; the body is the delivery's. */
    url: p.text().nullable(),
    requestHeaders: p.json<Record<string, string>>().nullable(),
    /** The receiver's answer headers in their order, as [name, value] pairs: at most 50, values cut at 512 characters. */
    responseHeaders: p.json<[string, string][]>().nullable(),
    durationMs: p.integer().nullable(),
    error: p.text().nullable(),
    nextAttemptAt: p.datetime().nullable(),
  },
});
export class WebhookAttempt extends WebhookAttemptSchema.class {}
WebhookAttemptSchema.setClass(WebhookAttempt);
