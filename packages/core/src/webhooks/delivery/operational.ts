import { isOperational } from '../../events/names.ts';
import type { PendingEvent } from '../../events/outbox.ts';
import { HOURLY_DELIVERY_LIMIT, MAX_ATTEMPTS } from './policy.ts';

/**
 * The operational events (events/groups/webhooks.ts) as the delivery engine and the endpoint screen emit them, in the
 * transaction of the change they describe. Source `system`: nobody's integration made them.
 */

interface EndpointRef {
  orgId: string;
  id: string;
  url: string;
}

/**
 * The endpoint's URL as these events show it: its origin and `/…` when it has a path or query. They go to every
 * subscriber of the workspace (and the changes feed), while a REST hook's or a chat tool's URL often carries its only
 * credential in the path (`/hooks/T0/B0/XXXX`) or the query; the origin still tells the reader which receiver it is,
 * the id finds it in the app. The owners' mail keeps the full URL: it goes to the people who may see it anyway.
 */
export function shownUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '…';
  }
  if (u.origin === 'null') return '…';
  return u.pathname === '/' && !u.search && !u.hash ? `${u.origin}/` : `${u.origin}/…`;
}

const shown = (e: EndpointRef) => ({ id: e.id, url: shownUrl(e.url) });

export const endpointDisabled = (e: EndpointRef, reason: string, failureCount: number, at: Date): PendingEvent => ({
  orgId: e.orgId,
  event: 'webhook.endpoint_disabled',
  source: 'system',
  data: { endpoint: shown(e), reason, failureCount },
  at,
});

export const endpointEnabled = (e: EndpointRef, enabledBy: string | null, at: Date): PendingEvent => ({
  orgId: e.orgId,
  event: 'webhook.endpoint_enabled',
  source: 'system',
  data: { endpoint: shown(e), enabledBy },
  at,
});

export interface ExhaustedDelivery {
  endpoint: EndpointRef;
  deliveryId: string;
  eventId: string | null;
  eventName: string;
  attempts: number;
  manual: boolean;
  lastStatusCode: number | null;
  lastError: string | null;
}

/**
 * `webhook.delivery_failed` when an automatic delivery failed its last attempt. Never about the delivery of an
 * operational event: a receiver that fails those would otherwise be told so by more of them, without end.
 */
export function deliveryFailed(d: ExhaustedDelivery, at: Date): PendingEvent | null {
  if (d.manual || d.eventId === null || d.attempts < MAX_ATTEMPTS || isOperational(d.eventName)) return null;
  return {
    orgId: d.endpoint.orgId,
    event: 'webhook.delivery_failed',
    source: 'system',
    data: {
      delivery: { id: d.deliveryId, attempts: d.attempts, lastStatusCode: d.lastStatusCode, lastError: d.lastError },
      endpoint: shown(d.endpoint),
      eventId: d.eventId,
      eventName: d.eventName,
    },
    at,
  };
}

/**
 * `webhook.limit_reached` for the reservation that made the hour's first skip: `before` is what the hour had counted
 * until then. Reservations serialise on the counter row, so exactly one of them sees `before <= limit` with a skip.
 */
export function limitReached(orgId: string, hour: Date, before: number, skipped: number, at: Date): PendingEvent | null {
  if (skipped <= 0 || before > HOURLY_DELIVERY_LIMIT) return null;
  return {
    orgId,
    event: 'webhook.limit_reached',
    source: 'system',
    data: { hour: hour.toISOString(), limit: HOURLY_DELIVERY_LIMIT, skipped },
    at,
  };
}
