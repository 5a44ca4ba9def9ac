import { jsonRows, qb, sql, statement, type Db } from '@leadwire/db';
import { encodeFeedCursor, type FeedPosition, laterOf } from '../../feed/cursor.ts';
import type { DeliveryGap } from '../../events/payload.ts';

/**
 * A delivery tells its receiver about the events the endpoint missed before it (skipped over the hourly limit or while
 * the endpoint was disabled): how many, and the changes-feed cursor just before the first of them, so the receiver
 * reads `GET /v1/events?after=<gap.after>` up to this delivery's `id` to catch up. The endpoint row keeps the count and
 * the earliest missed place between deliveries.
 */

/** What gap accounting needs of a delivery being created; `body` is replaced when the delivery carries a gap. */
export interface GapItem {
  endpointId: string;
  /** `filtered` neither counts as missed nor carries a gap: the endpoint asked not to get it. */
  state: 'pending' | 'skipped' | 'filtered';
  body: string;
  /** The event's feed place: set on automatic deliveries only (dispatch), the only ones that count or carry a gap. */
  position?: FeedPosition;
  /** The endpoint had missed events when dispatch read it: a sent delivery then has to take them. */
  gapStored?: boolean;
}

/**
 * The endpoints' gap state, locked in id order (so two rounds touching the same endpoints cannot deadlock), so that
 * concurrent dispatch rounds (other processes) count and hand out each missed event once.
 */
const LOCK_GAPS = statement<{ ids: string[] }>()((p) =>
  qb
    .selectFrom('webhook_endpoints')
    .select(['id', 'gap_skipped', sql<string | null>`gap_txid::text`.as('gap_txid'), sql<string | null>`gap_seq::text`.as('gap_seq')])
    .where('id', '=', (eb) => eb.fn.any(sql<string[]>`${p.ids}::uuid[]`))
    .orderBy('id')
    .forUpdate(),
);

/** Writes back the state computed under LOCK_GAPS' lock (absolute values: the lock makes read-modify-write atomic). */
const SAVE_GAPS = statement<{ rows: string }>()((p) =>
  qb
    .updateTable('webhook_endpoints as w')
    .from(jsonRows('webhook_endpoints', p.rows).as('v'))
    .set((eb) => ({ gap_skipped: eb.ref('v.gap_skipped'), gap_txid: eb.ref('v.gap_txid'), gap_seq: eb.ref('v.gap_seq') }))
    .whereRef('w.id', '=', 'v.id'),
);

const earlierOf = (a: FeedPosition, b: FeedPosition) => (laterOf(a, b) === a ? b : a);

/** The body with `gap` added last: the event's own fields keep their order and bytes. */
export function withGap(body: string, gap: DeliveryGap): string {
  return JSON.stringify({ ...(JSON.parse(body) as Record<string, unknown>), gap });
}

/**
 * Counts this batch's skipped automatic deliveries on their endpoints and gives each endpoint's first sent automatic
 * delivery the gap before it (in the caller's transaction, with the deliveries it creates). Items are taken in the
 * order given, so a skip and a later send in one batch are told apart. No statement at all when nothing was skipped
 * and no endpoint has a gap waiting.
 */
export async function carryGaps(db: Db, items: GapItem[]): Promise<void> {
  const touched = new Set<string>();
  for (const d of items) if (d.position && (d.state === 'skipped' || (d.state === 'pending' && d.gapStored))) touched.add(d.endpointId);
  if (touched.size === 0) return;
  const locked = await db.run(LOCK_GAPS, { ids: [...touched].sort() });
  const state = new Map<string, { skipped: number; first: FeedPosition | null }>();
  for (const r of locked) {
    state.set(r.id, { skipped: r.gap_skipped, first: r.gap_txid && r.gap_seq ? { txid: r.gap_txid, seq: r.gap_seq } : null });
  }
  for (const d of items) {
    const s = d.position && state.get(d.endpointId);
    if (!s || !d.position) continue;
    if (d.state === 'skipped') {
      s.skipped += 1;
      s.first = s.first ? earlierOf(s.first, d.position) : d.position;
    } else if (d.state === 'pending' && s.skipped > 0 && s.first) {
      // "Just after the event before the first missed one": (txid, seq - 1) sorts right before it, whatever precedes it.
      const after = encodeFeedCursor({ txid: s.first.txid, seq: String(BigInt(s.first.seq) - 1n) });
      d.body = withGap(d.body, { skipped: s.skipped, after });
      s.skipped = 0;
      s.first = null;
    }
  }
  const rows = [...state].map(([id, s]) => ({
    id,
    gap_skipped: s.skipped,
    gap_txid: s.first?.txid ?? null,
    gap_seq: s.first?.seq ?? null,
  }));
  await db.run(SAVE_GAPS, { rows: JSON.stringify(rows) });
}
