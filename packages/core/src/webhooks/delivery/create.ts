import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type Db, type DB, type Selectable } from '@leadwire/db';
import type { FeedPosition } from '../../feed/cursor.ts';
import { isOperational } from '../../events/names.ts';
import { emitEvents, type PendingEvent } from '../../events/outbox.ts';
import { carryGaps } from './gap.ts';
import { limitReached } from './operational.ts';
import { HOURLY_DELIVERY_LIMIT, hourWindow, SKIP_FILTERED, SKIP_LIMIT } from './policy.ts';

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
  /**
   * The endpoint's filter does not match the event (dispatch only): recorded as `filtered`, never sent, and neither
   * spending the hourly limit nor counted as missed (the receiver asked not to get it).
   */
  filtered?: boolean;
  /** The event's changes-feed place, on automatic deliveries: a skipped one is counted as missed (gap.ts). */
  position?: FeedPosition;
  /** Dispatch read missed events on the endpoint: this delivery, if sent, may carry them as `gap`. */
  gapStored?: boolean;
}

export interface CreatedDelivery {
  id: string;
  endpointId: string;
  state: 'pending' | 'skipped' | 'filtered';
  skipReason: string | null;
}

/**
 * Reserves `wanted` deliveries in the organization's hour and answers how many fit. The counter grows by all of them,
 * so concurrent reservations (other processes, other pumps) serialise on its row and never hand out more than the limit.
 */
const RESERVE = statement<{ bucket: string; window: Date; wanted: number }>()((p) =>
  qb
    .insertInto('rate_limit_counters')
    .values({ bucket: p.bucket, window_start: p.window, count: p.wanted })
    .onConflict((oc) =>
      oc
        .columns(['bucket', 'window_start'])
        .doUpdateSet((eb) => ({ count: eb(eb.ref('rate_limit_counters.count'), '+', eb.ref('excluded.count')) })),
    )
    .returning('count'),
);

export const limitBucket = (orgId: string) => `webhooks:${orgId}`;

/** How many of `wanted` fit; the reservation that makes the hour's first skip adds `webhook.limit_reached`. */
async function reserve(db: Db, orgId: string, wanted: number, now: Date, events: PendingEvent[]): Promise<number> {
  const window = hourWindow(now);
  const [row] = await db.run(RESERVE, { bucket: limitBucket(orgId), window, wanted });
  const before = (row?.count ?? wanted) - wanted;
  const fit = Math.max(0, Math.min(wanted, HOURLY_DELIVERY_LIMIT - before));
  const reached = limitReached(orgId, window, before, wanted - fit, now);
  if (reached) events.push(reached);
  return fit;
}

/**
 * Filtered and skipped deliveries (disabled endpoint) and operational events' deliveries neither spend nor meet the
 * hourly limit.
 */
const limited = (d: NewDelivery) => !d.filtered && !d.skipReason && !isOperational(d.event);

/**
 * A replay (redeliver, recover) takes its original's message id (the Standard Webhooks `webhook-id`), so a receiver that
 * de-duplicates on it sees the same message again; a new delivery's message id is its own id (message_id null).
 */
const INSERT_DELIVERIES = statement<{ now: Date; rows: string }>()((p) =>
  qb
    .insertInto('webhook_deliveries')
    .columns([
      'id',
      'organization_id',
      'endpoint_id',
      'event_id',
      'event',
      'body',
      'state',
      'manual',
      'replay_of',
      'message_id',
      'next_attempt_at',
      'skip_reason',
      'created_at',
      'updated_at',
    ])
    .expression(
      qb
        .selectFrom(
          sql<DeliveryRecord>`jsonb_to_recordset(${p.rows}::jsonb)`.as<'v'>(
            sql`v(id uuid, organization_id uuid, endpoint_id uuid, event_id uuid, event text, body text, state text, manual boolean, replay_of uuid, skip_reason text)`,
          ),
        )
        .select((eb) => [
          'v.id',
          'v.organization_id',
          'v.endpoint_id',
          'v.event_id',
          'v.event',
          'v.body',
          'v.state',
          'v.manual',
          'v.replay_of',
          // A lookup per replayed row by primary key: a join here let the generic plan hash the whole delivery log.
          eb
            .selectFrom('webhook_deliveries as o')
            .select((o) => o.fn.coalesce('o.message_id', 'o.id').as('m'))
            .whereRef('o.id', '=', 'v.replay_of')
            .as('message_id'),
          eb.case().when('v.state', '=', sql.lit('pending')).then(sql<Date>`${p.now}::timestamptz`).end().as('next_attempt_at'),
          'v.skip_reason',
          sql<Date>`${p.now}::timestamptz`.as('created_at'),
          sql<Date>`${p.now}::timestamptz`.as('updated_at'),
        ]),
    ),
);

/** A row of INSERT_DELIVERIES' JSON, in the column names it is inserted under. */
type DeliveryRecord = Pick<
  Selectable<DB['webhook_deliveries']>,
  'id' | 'organization_id' | 'endpoint_id' | 'event_id' | 'event' | 'body' | 'manual' | 'replay_of' | 'skip_reason'
> & { state: CreatedDelivery['state'] };

/**
 * A skipped or filtered delivery still gets a line in the log (attempt 0, its state as the outcome), so the owner sees
 * why nothing was sent.
 */
const INSERT_SKIPPED_ATTEMPTS = statement<{ now: Date; ids: string[] }>()((p) =>
  qb
    .insertInto('webhook_attempts')
    .columns(['id', 'organization_id', 'endpoint_id', 'delivery_id', 'event', 'attempt', 'outcome', 'error', 'created_at'])
    .expression(
      qb
        .selectFrom('webhook_deliveries as d')
        .select([
          sql<string>`gen_random_uuid()`.as('id'),
          'd.organization_id',
          'd.endpoint_id',
          'd.id as delivery_id',
          'd.event',
          sql.lit(0).as('attempt'),
          sql<'skipped' | 'filtered'>`d.state`.as('outcome'),
          'd.skip_reason as error',
          sql<Date>`${p.now}::timestamptz`.as('created_at'),
        ])
        .where('d.id', '=', (eb) => eb.fn.any(sql<string[]>`${p.ids}::uuid[]`)),
    ),
);

/**
 * Creates deliveries (in the caller's transaction): due at once, or skipped with a log line. Each organization's hourly
 * allowance is spent in the order given (oldest events first); deliveries already skipped, and deliveries of
 * operational events (which are few: once per hour, per disabling, per exhausted delivery), do not spend it.
 */
export async function createDeliveries(db: Db, items: readonly NewDelivery[], now: Date): Promise<CreatedDelivery[]> {
  if (items.length === 0) return [];
  const sendable = new Map<string, number>();
  for (const d of items) if (limited(d)) sendable.set(d.orgId, (sendable.get(d.orgId) ?? 0) + 1);
  const allowance = new Map<string, number>();
  const events: PendingEvent[] = [];
  for (const [orgId, wanted] of sendable) allowance.set(orgId, await reserve(db, orgId, wanted, now, events));
  await emitEvents(db, events);

  const rows = items.map((d) => {
    if (d.filtered) return { ...d, id: randomUUID(), state: 'filtered' as const, skipReason: SKIP_FILTERED };
    let skipReason = d.skipReason;
    if (limited(d)) {
      const left = allowance.get(d.orgId) ?? 0;
      if (left > 0) allowance.set(d.orgId, left - 1);
      else skipReason = SKIP_LIMIT;
    }
    return { ...d, id: randomUUID(), state: skipReason ? ('skipped' as const) : ('pending' as const), skipReason };
  });
  await carryGaps(db, rows);
  await db.run(INSERT_DELIVERIES, {
    now,
    rows: JSON.stringify(
      rows.map(
        (r): DeliveryRecord => ({
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
        }),
      ),
    ),
  });
  const skipped = rows.filter((r) => r.state !== 'pending').map((r) => r.id);
  if (skipped.length) await db.run(INSERT_SKIPPED_ATTEMPTS, { now, ids: skipped });
  return rows.map((r) => ({ id: r.id, endpointId: r.endpointId, state: r.state, skipReason: r.skipReason }));
}

const SPENT = statement<{ bucket: string; window: Date }>()((p) =>
  qb.selectFrom('rate_limit_counters').select('count').where('bucket', '=', p.bucket).where('window_start', '=', p.window).forUpdate(),
);

/**
 * What is left of the organization's hour, holding its counter row until the caller's transaction ends so that a
 * replay sized to it is not raced past the limit by another one.
 */
export async function allowanceLeft(db: Db, orgId: string, now: Date): Promise<number> {
  const [row] = await db.run(SPENT, { bucket: limitBucket(orgId), window: hourWindow(now) });
  return Math.max(0, HOURLY_DELIVERY_LIMIT - (row?.count ?? 0));
}
