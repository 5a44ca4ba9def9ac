import { qb, sql, statement, type Db } from '@leadwire/db';
import { matchesFilter } from '../endpoints/filter.ts';
import { createDeliveries, type NewDelivery } from './create.ts';
import { SKIP_DISABLED } from './policy.ts';

/** Events fanned out per transaction: big enough for throughput, small enough to keep the transaction short. */
export const DISPATCH_BATCH = 500;

/**
 * Claims the oldest pending events by taking them off the queue in one statement; other pumps skip the rows this one
 * holds instead of waiting for them, and a rolled-back round leaves them queued. Only ids come back: most events have
 * no subscribed endpoint, and their payloads are never read.
 *
 * The oldest rows are read off the primary key, (created_at, event_id), in order, and deleted by their row address:
 * matching them by key instead (`(created_at, event_id) in (...)`) let the generic plan hash-join the whole queue
 * each round, so draining a backlog of N read N²/500 rows (docs/benchmarks.md, "Scale"). The addresses are stable
 * within the statement: the rows are locked by it.
 */
const CLAIM_EVENTS = statement<{ batch: number }>()((p) =>
  qb
    .deleteFrom('outbox_pending')
    .where(
      sql<boolean>`ctid = any(array(${qb
        .selectFrom('outbox_pending')
        .select(sql<string>`ctid`.as('ctid'))
        .orderBy('created_at')
        .orderBy('event_id')
        .limit(p.batch)
        .forUpdate()
        .skipLocked()}))`,
    )
    .returning('event_id as id'),
);

/** Every endpoint (webhook or REST hook) of a claimed event's organization subscribed to it, enabled or not. */
const TARGETS = statement<{ ids: string[] }>()((p) =>
  qb
    .selectFrom('outbox_events as o')
    .innerJoin('webhook_endpoints as w', (join) =>
      join.onRef('w.organization_id', '=', 'o.organization_id').on((eb) => eb('o.event', '=', eb.fn.any('w.events'))),
    )
    .select(['o.id as event_id', 'w.id as endpoint_id', 'w.enabled', 'w.gap_skipped', 'w.filter'])
    .where('o.id', '=', (eb) => eb.fn.any(sql<string[]>`${p.ids}::uuid[]`))
    .orderBy('o.created_at')
    .orderBy('o.id')
    .orderBy('w.id'),
);

/** The events that have somewhere to go, read once each however many endpoints they go to. */
const TARGETED_EVENTS = statement<{ ids: string[] }>()((p) =>
  qb
    .selectFrom('outbox_events')
    .select(['id', 'organization_id', 'event', 'payload', sql<string>`txid::text`.as('txid'), sql<string>`seq::text`.as('seq')])
    .where('id', '=', (eb) => eb.fn.any(sql<string[]>`${p.ids}::uuid[]`)),
);

/**
 * The bytes every attempt sends: the outbox payload with its id first, then the spec's field order (event, timestamp,
 * source, data). Built once, stored on the delivery, signed as stored.
 */
export function bodyOf(payload: Record<string, unknown>): string {
  const { id, event, timestamp, source, data, ...rest } = payload;
  return JSON.stringify({ id, event, timestamp, ...(source === undefined ? {} : { source }), data, ...rest });
}

/**
 * One dispatch round: claims a batch of events (off the pending queue) and creates one delivery per subscribed
 * endpoint (filtered when the endpoint's filter does not match the event's data; skipped for disabled endpoints and
 * beyond the hourly limit; an endpoint's first sent one after skips carries them as `gap`), all in one transaction. Returns the number
 * of events handled (a full batch means more may be waiting).
 */
export async function dispatchEvents(db: Db, now: Date, batch = DISPATCH_BATCH): Promise<number> {
  return db.transaction(async (tx) => {
    const claimed = await tx.run(CLAIM_EVENTS, { batch });
    if (claimed.length === 0) return 0;
    const targets = await tx.run(TARGETS, { ids: claimed.map((e) => e.id) });
    if (targets.length) {
      const targeted = [...new Set(targets.map((t) => t.event_id))];
      const byId = new Map((await tx.run(TARGETED_EVENTS, { ids: targeted })).map((e) => [e.id, e]));
      const items: NewDelivery[] = [];
      for (const t of targets) {
        const e = byId.get(t.event_id);
        if (!e) continue;
        items.push({
          orgId: e.organization_id,
          endpointId: t.endpoint_id,
          eventId: e.id,
          event: e.event,
          body: bodyOf({ ...e.payload, id: e.id }),
          manual: false,
          replayOf: null,
          skipReason: t.enabled ? null : SKIP_DISABLED,
          filtered: t.filter !== null && !matchesFilter(t.filter, e.payload.data),
          position: { txid: e.txid, seq: e.seq },
          gapStored: t.gap_skipped > 0,
        });
      }
      await createDeliveries(tx, items, now);
    }
    return claimed.length;
  });
}
