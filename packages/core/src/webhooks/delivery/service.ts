import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import { iso, isoOrNull } from '../../records/dates.ts';
import { afterCursor, toPage } from '../../records/pagination.ts';
import { errors } from '../../errors.ts';
import { allowanceLeft, createDeliveries, type NewDelivery } from './create.ts';
import type { DeliveryAttemptView, DeliveryLogInput, QueuedDelivery, RecoverInput, RecoverResult, RedeliverInput } from './schemas.ts';

const ENDPOINT = `select id from webhook_endpoints where id = ? and organization_id = ?`;

const ORIGINAL = `select id, event, event_id, body from webhook_deliveries where id = ? and endpoint_id = ? and organization_id = ?`;

/**
 * Deliveries of the endpoint that failed or were skipped since then, oldest first: the events themselves, not earlier
 * replays, and not those already replayed with success or still on their way (so calling recover again continues
 * where the hourly limit stopped it rather than sending twice).
 */
const RECOVERABLE = `
select d.id, d.event, d.event_id, d.body from webhook_deliveries d
where d.endpoint_id = ? and d.organization_id = ? and not d.manual and d.state in ('failed', 'skipped') and d.created_at >= ?
  and d.id not in (
    select r.replay_of from webhook_deliveries r
    where r.endpoint_id = ? and r.manual and r.replay_of is not null and r.state in ('pending', 'in_flight', 'succeeded'))
order by d.created_at, d.id`;

const LOG = `
select a.id, a.created_at, a.event, a.delivery_id, coalesce(d.message_id, d.id) as message_id, a.attempt, a.outcome, a.status_code, a.response_body, a.duration_ms, a.error,
  a.next_attempt_at, d.manual
from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
where a.endpoint_id = ? and a.organization_id = ? and (?::text is null or a.outcome = ?) and (?::text is null or a.event = ?)
  and ${afterCursor('a', 'webhook_attempts')}
order by a.created_at desc, a.id desc
limit ?`;

interface AttemptRow {
  id: string;
  created_at: Date;
  event: string;
  delivery_id: string;
  message_id: string;
  attempt: number;
  outcome: DeliveryAttemptView['outcome'];
  status_code: number | null;
  response_body: string | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  manual: boolean;
}

interface OriginalRow {
  id: string;
  event: string;
  event_id: string | null;
  body: string;
}

const toView = (r: AttemptRow): DeliveryAttemptView => ({
  id: r.id,
  at: iso(r.created_at),
  event: r.event,
  deliveryId: r.delivery_id,
  messageId: r.message_id,
  attempt: r.attempt,
  outcome: r.outcome,
  statusCode: r.status_code,
  responseBody: r.response_body,
  durationMs: r.duration_ms,
  error: r.error,
  nextAttemptAt: isoOrNull(r.next_attempt_at),
  manual: r.manual,
});

/** Owners and admins manage endpoints; another organization's endpoint looks unknown. */
export async function requireEndpoint(db: Db, actor: InternalActor, id: string): Promise<void> {
  requireRole(actor, 'owner', 'admin');
  const [row] = await db.execute<{ id: string }[]>(ENDPOINT, [id, actor.orgId]);
  if (!row) throw errors.notFound(`No webhook endpoint with id ${id}`);
}

const replayOf = (actor: InternalActor, endpointId: string, d: OriginalRow): NewDelivery => ({
  orgId: actor.orgId,
  endpointId,
  eventId: d.event_id,
  event: d.event,
  body: d.body,
  manual: true,
  replayOf: d.id,
  skipReason: null,
});

export async function queueOne(tx: Db, item: NewDelivery, now: Date): Promise<QueuedDelivery> {
  const [created] = await createDeliveries(tx, [item], now);
  if (!created) throw new Error('delivery not created');
  return { deliveryId: created.id, event: item.event, state: created.state, skipReason: created.skipReason };
}

export async function listDeliveryLog(db: Db, actor: InternalActor, q: DeliveryLogInput) {
  await requireEndpoint(db, actor, q.id);
  const rows = await db.execute<AttemptRow[]>(LOG, [
    q.id, actor.orgId,
    q.outcome ?? null, q.outcome ?? null,
    q.event ?? null, q.event ?? null,
    q.cursor ?? null, q.cursor ?? null, actor.orgId,
    q.limit + 1,
  ]);
  return toPage(rows, q.limit, toView);
}

/** `ping` to this endpoint only, sent even while it is disabled (to check a fixed receiver before enabling it). */
export async function sendTestPing(db: Db, actor: InternalActor, id: string, now: Date): Promise<QueuedDelivery> {
  return db.transaction(async (tx) => {
    await requireEndpoint(tx, actor, id);
    const body = JSON.stringify({ event: 'ping', timestamp: now.toISOString(), data: { message: 'A test event from Leadwire: your endpoint is reachable.' } });
    return queueOne(tx, { orgId: actor.orgId, endpointId: id, eventId: null, event: 'ping', body, manual: true, replayOf: null, skipReason: null }, now);
  });
}

/** A new manual delivery of the same bytes and message id: one attempt, not counted toward disabling. */
export async function redeliver(db: Db, actor: InternalActor, input: RedeliverInput, now: Date): Promise<QueuedDelivery> {
  return db.transaction(async (tx) => {
    await requireEndpoint(tx, actor, input.id);
    const [original] = await tx.execute<OriginalRow[]>(ORIGINAL, [input.deliveryId, input.id, actor.orgId]);
    if (!original) throw errors.notFound(`No delivery ${input.deliveryId} for webhook endpoint ${input.id}`);
    return queueOne(tx, replayOf(actor, input.id, original), now);
  });
}

/** Replays what failed or was skipped since `since`, as many as the hour allows; the rest is reported as remaining. */
export async function recover(db: Db, actor: InternalActor, input: RecoverInput, now: Date): Promise<RecoverResult> {
  return db.transaction(async (tx) => {
    await requireEndpoint(tx, actor, input.id);
    const left = await allowanceLeft(tx, actor.orgId, now);
    const found = await tx.execute<OriginalRow[]>(RECOVERABLE, [input.id, actor.orgId, new Date(input.since), input.id]);
    const chosen = found.slice(0, left);
    await createDeliveries(tx, chosen.map((d) => replayOf(actor, input.id, d)), now);
    return { replayed: chosen.length, remaining: found.length - chosen.length };
  });
}
