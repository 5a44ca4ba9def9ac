import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import { iso, isoOrNull } from '../../records/dates.ts';
import { newestFirst, refuseForeignCursor, toPage } from '../../records/pagination.ts';
import { errors } from '../../errors.ts';
import { allowanceLeft, createDeliveries, type NewDelivery } from './create.ts';
import { announceAfterCommit } from '../../events/written.ts';
import type { DeliveryAttemptView, DeliveryLogInput, QueuedDelivery, RecoverInput, RecoverResult, RedeliverInput } from './schemas.ts';

const ENDPOINT = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('webhook_endpoints').select('id').where('id', '=', p.id).where('organization_id', '=', p.orgId),
);

const ORIGINAL = statement<{ deliveryId: string; endpointId: string; orgId: string }>()((p) =>
  qb
    .selectFrom('webhook_deliveries')
    .select(['id', 'event', 'event_id', 'body'])
    .where('id', '=', p.deliveryId)
    .where('endpoint_id', '=', p.endpointId)
    .where('organization_id', '=', p.orgId),
);

/**
 * Deliveries of the endpoint that failed or were skipped since then, oldest first: the events themselves, not earlier
 * replays, and not those already replayed with success or still on their way (so calling recover again continues
 * where the hourly limit stopped it rather than sending twice). States are literals, as the partial index wants them.
 */
const RECOVERABLE = statement<{ endpointId: string; orgId: string; since: Date }>()((p) =>
  qb
    .selectFrom('webhook_deliveries as d')
    .select(['d.id', 'd.event', 'd.event_id', 'd.body'])
    .where('d.endpoint_id', '=', p.endpointId)
    .where('d.organization_id', '=', p.orgId)
    .where((eb) => eb.not(eb.ref('d.manual')))
    .where('d.state', 'in', [sql.lit('failed' as const), sql.lit('skipped' as const)])
    .where('d.created_at', '>=', p.since)
    .where((eb) =>
      eb(
        'd.id',
        'not in',
        eb
          .selectFrom('webhook_deliveries as r')
          .select('r.replay_of')
          .where('r.endpoint_id', '=', p.endpointId)
          .where((eb) => eb.ref('r.manual'))
          .where('r.replay_of', 'is not', null)
          .where('r.state', 'in', [sql.lit('pending' as const), sql.lit('in_flight' as const), sql.lit('succeeded' as const)]),
      ),
    )
    .orderBy('d.created_at')
    .orderBy('d.id'),
);

type OriginalRow = NonNullable<(typeof RECOVERABLE)['row']>;

/**
 * The delivery log's lines, as the log lists them and an attempt's page opens one: the attempt, its delivery, and the
 * request that wrote its event (by the event's primary key: one probe per line).
 */
export const attemptLines = () =>
  qb
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .leftJoin('outbox_events as e', 'e.id', 'd.event_id')
    .select((eb) => [
      'a.id',
      'a.created_at',
      'a.event',
      'a.delivery_id',
      eb.fn.coalesce('d.message_id', 'd.id').as('message_id'),
      'a.attempt',
      'a.outcome',
      'a.status_code',
      'a.response_body',
      'a.duration_ms',
      'a.error',
      'a.next_attempt_at',
      'd.manual',
      'e.request_id',
    ]);

/**
 * Newest first, keyset-paginated over (created_at, id) like every list (records/pagination.ts); filters null: all but
 * the `filtered` lines.
 */
const LOG = statement<{
  endpointId: string;
  orgId: string;
  outcome: DeliveryAttemptView['outcome'] | null;
  event: string | null;
  since: Date | null;
  until: Date | null;
  search: string | null;
  cursor: string | null;
  limit: number;
}>()((p) =>
  newestFirst(
    attemptLines()
      .where('a.endpoint_id', '=', p.endpointId)
      .where('a.organization_id', '=', p.orgId)
      // Filtered lines only when asked for by outcome: they can far outnumber the deliveries sent.
      .where((eb) =>
        eb.or([
          eb.and([sql<boolean>`${p.outcome}::text is null`, eb('a.outcome', '<>', sql.lit('filtered'))]),
          eb('a.outcome', '=', p.outcome),
        ]),
      )
      .where((eb) => eb.or([sql<boolean>`${p.event}::text is null`, eb('a.event', '=', p.event)]))
      .where((eb) => eb.or([sql<boolean>`${p.since}::timestamptz is null`, eb('a.created_at', '>=', p.since)]))
      .where((eb) => eb.or([sql<boolean>`${p.until}::timestamptz is null`, eb('a.created_at', '<', p.until)]))
      // One id for any of: the event, the delivery, its webhook-id, the attempt, or a record in the body (a contact's id).
      .where((eb) =>
        eb.or([
          sql<boolean>`${p.search}::uuid is null`,
          eb('d.event_id', '=', sql<string>`${p.search}::uuid`),
          eb('a.delivery_id', '=', sql<string>`${p.search}::uuid`),
          eb('d.message_id', '=', sql<string>`${p.search}::uuid`),
          eb('a.id', '=', sql<string>`${p.search}::uuid`),
          sql<boolean>`strpos(${eb.ref('d.body')}, ${p.search}::text) > 0`,
        ]),
      ),
    'webhook_attempts',
    'a',
    p,
  ),
);

type AttemptRow = NonNullable<(typeof LOG)['row']>;

/** A line of the log as the API answers it. */
export const attemptView = (r: AttemptRow): DeliveryAttemptView => ({
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
  requestId: r.request_id,
});

/** Owners and admins manage endpoints; another organization's endpoint looks unknown. */
export async function requireEndpoint(db: Db, actor: InternalActor, id: string): Promise<void> {
  requireRole(actor, 'owner', 'admin');
  const [row] = await db.run(ENDPOINT, { id, orgId: actor.orgId });
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
  // Only dispatch applies filters: a test or a replay is never filtered.
  if (!created || created.state === 'filtered') throw new Error('delivery not created');
  await announceAfterCommit(tx);
  return { deliveryId: created.id, event: item.event, state: created.state, skipReason: created.skipReason };
}

export async function listDeliveryLog(db: Db, actor: InternalActor, q: DeliveryLogInput) {
  await requireEndpoint(db, actor, q.id);
  const rows = await db.run(LOG, {
    endpointId: q.id,
    orgId: actor.orgId,
    outcome: q.outcome ?? null,
    event: q.event ?? null,
    since: q.since ? new Date(q.since) : null,
    until: q.until ? new Date(q.until) : null,
    search: q.search?.toLowerCase() ?? null,
    cursor: q.cursor ?? null,
    limit: q.limit + 1,
  });
  await refuseForeignCursor(db, { list: 'webhook_attempts', scope: q.id }, { orgId: actor.orgId, cursor: q.cursor }, rows);
  return toPage(rows, q.limit, attemptView);
}

/** `ping` to this endpoint only, sent even while it is disabled (to check a fixed receiver before enabling it). */
export async function sendTestPing(db: Db, actor: InternalActor, id: string, now: Date): Promise<QueuedDelivery> {
  return db.transaction(async (tx) => {
    await requireEndpoint(tx, actor, id);
    const body = JSON.stringify({
      // A fresh id per ping: each is a new event to a receiver that de-duplicates on `id`.
      id: randomUUID(),
      event: 'ping',
      timestamp: now.toISOString(),
      data: { message: 'A test event from Leadwire: your endpoint is reachable.' },
    });
    return queueOne(
      tx,
      { orgId: actor.orgId, endpointId: id, eventId: null, event: 'ping', body, manual: true, replayOf: null, skipReason: null },
      now,
    );
  });
}

/** A new manual delivery of the same bytes and message id: one attempt, not counted toward disabling. */
export async function redeliver(db: Db, actor: InternalActor, input: RedeliverInput, now: Date): Promise<QueuedDelivery> {
  return db.transaction(async (tx) => {
    await requireEndpoint(tx, actor, input.id);
    const [original] = await tx.run(ORIGINAL, { deliveryId: input.deliveryId, endpointId: input.id, orgId: actor.orgId });
    if (!original) throw errors.notFound(`No delivery ${input.deliveryId} for webhook endpoint ${input.id}`);
    return queueOne(tx, replayOf(actor, input.id, original), now);
  });
}

/** Replays what failed or was skipped since `since`, as many as the hour allows; the rest is reported as remaining. */
export async function recover(db: Db, actor: InternalActor, input: RecoverInput, now: Date): Promise<RecoverResult> {
  return db.transaction(async (tx) => {
    await requireEndpoint(tx, actor, input.id);
    const left = await allowanceLeft(tx, actor.orgId, now);
    const found = await tx.run(RECOVERABLE, { endpointId: input.id, orgId: actor.orgId, since: new Date(input.since) });
    const chosen = found.slice(0, left);
    await createDeliveries(
      tx,
      chosen.map((d) => replayOf(actor, input.id, d)),
      now,
    );
    if (chosen.length) await announceAfterCommit(tx);
    return { replayed: chosen.length, remaining: found.length - chosen.length };
  });
}
