import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import { HOURLY_DELIVERY_LIMIT, hourWindow, SKIP_LIMIT } from './policy.ts';

/** A delivery about to be created; `skipReason` set means it is recorded but never sent (endpoint disabled). */
export interface NewDelivery {
  orgId: string;
  endpointId: string;
  eventId: string | null;
  event: string;
  body: string;
  manual: boolean;
  replayOf: string | null;
  skipReason: string | null;
}

export interface CreatedDelivery {
  id: string;
  endpointId: string;
  state: 'pending' | 'skipped';
  skipReason: string | null;
}

/**
 * Reserves `wanted` deliveries in the organization's hour and answers how many fit. The counter grows by all of them,
 * so concurrent reservations (other processes, other pumps) serialise on its row and never hand out more than the limit.
 */
const RESERVE = `
insert into rate_limit_counters (bucket, window_start, count) values (?, ?, ?)
on conflict (bucket, window_start) do update set count = rate_limit_counters.count + excluded.count
returning count`;

export const limitBucket = (orgId: string) => `webhooks:${orgId}`;

async function reserve(db: Db, orgId: string, wanted: number, now: Date): Promise<number> {
  const [row] = await db.execute<{ count: number }[]>(RESERVE, [limitBucket(orgId), hourWindow(now), wanted]);
  const before = (row?.count ?? wanted) - wanted;
  return Math.max(0, Math.min(wanted, HOURLY_DELIVERY_LIMIT - before));
}

/**
 * A replay (redeliver, recover) takes its original's message id (the Standard Webhooks `webhook-id`), so a receiver that
 * de-duplicates on it sees the same message again; a new delivery's message id is its own id (message_id null).
 */
const INSERT_DELIVERIES = `
insert into webhook_deliveries (id, organization_id, endpoint_id, event_id, event, body, state, manual, replay_of, message_id, next_attempt_at, skip_reason, created_at, updated_at)
select v.id, v.organization_id, v.endpoint_id, v.event_id, v.event, v.body, v.state, v.manual, v.replay_of, coalesce(o.message_id, o.id),
  case when v.state = 'pending' then ?::timestamptz end, v.skip_reason, ?::timestamptz, ?::timestamptz
from jsonb_to_recordset(?::jsonb) as v(id uuid, organization_id uuid, endpoint_id uuid, event_id uuid, event text, body text, state text, manual boolean, replay_of uuid, skip_reason text)
left join webhook_deliveries o on o.id = v.replay_of`;

/** A skipped delivery still gets a line in the log (attempt 0), so the owner sees why nothing was sent. */
const INSERT_SKIPPED_ATTEMPTS = `
insert into webhook_attempts (id, organization_id, endpoint_id, delivery_id, event, attempt, outcome, error, created_at)
select gen_random_uuid(), d.organization_id, d.endpoint_id, d.id, d.event, 0, 'skipped', d.skip_reason, ?::timestamptz
from webhook_deliveries d where d.id = any(?::uuid[])`;

/**
 * Creates deliveries (in the caller's transaction): due at once, or skipped with a log line. Each organization's hourly
 * allowance is spent in the order given (oldest events first); deliveries already skipped do not spend it.
 */
export async function createDeliveries(db: Db, items: readonly NewDelivery[], now: Date): Promise<CreatedDelivery[]> {
  if (items.length === 0) return [];
  const sendable = new Map<string, number>();
  for (const d of items) if (!d.skipReason) sendable.set(d.orgId, (sendable.get(d.orgId) ?? 0) + 1);
  const allowance = new Map<string, number>();
  for (const [orgId, wanted] of sendable) allowance.set(orgId, await reserve(db, orgId, wanted, now));

  const rows = items.map((d) => {
    let skipReason = d.skipReason;
    if (!skipReason) {
      const left = allowance.get(d.orgId) ?? 0;
      if (left > 0) allowance.set(d.orgId, left - 1);
      else skipReason = SKIP_LIMIT;
    }
    return { ...d, id: randomUUID(), state: skipReason ? ('skipped' as const) : ('pending' as const), skipReason };
  });
  await db.execute(INSERT_DELIVERIES, [
    now,
    now,
    now,
    JSON.stringify(
      rows.map((r) => ({
        id: r.id,
        organization_id: r.orgId,
        endpoint_id: r.endpointId,
        event_id: r.eventId,
        event: r.event,
        body: r.body,
        state: r.state,
        manual: r.manual,
        replay_of: r.replayOf,
        skip_reason: r.skipReason,
      })),
    ),
  ]);
  const skipped = rows.filter((r) => r.state === 'skipped').map((r) => r.id);
  if (skipped.length) await db.execute(INSERT_SKIPPED_ATTEMPTS, [now, skipped]);
  return rows.map((r) => ({ id: r.id, endpointId: r.endpointId, state: r.state, skipReason: r.skipReason }));
}

const SPENT = `select count from rate_limit_counters where bucket = ? and window_start = ? for update`;

/**
 * What is left of the organization's hour, holding its counter row until the caller's transaction ends so that a
 * replay sized to it is not raced past the limit by another one.
 */
export async function allowanceLeft(db: Db, orgId: string, now: Date): Promise<number> {
  const [row] = await db.execute<{ count: number }[]>(SPENT, [limitBucket(orgId), hourWindow(now)]);
  return Math.max(0, HOURLY_DELIVERY_LIMIT - (row?.count ?? 0));
}
