import { type ExpressionBuilder, qb, sql, statement, type DB } from '@leadwire/db';

/**
 * The changes feed's page statements. Both read one organization's events after a position in (txid, seq) order, and
 * only below the horizon: the oldest transaction still running in this statement's own snapshot
 * (`pg_current_snapshot()` is the statement's snapshot under read committed). Every transaction below it has ended and
 * this snapshot sees every one that committed, so a page never passes a position where a row could still appear.
 * The horizon is selected on its own (the lateral joins below hang off it), so a page answers it even with no event.
 * Both walk outbox_events_feed_idx (organization_id, txid, seq) from the cursor: no sort, at most the rows they return
 * (or, filtered, the window they scan).
 */

type Cursor = { orgId: string; txid: string; seq: string };

const XID8_MAX = sql.lit('18446744073709551615');
const BIGINT_MAX = sql.lit('9223372036854775807');

const HORIZON = qb.selectNoFrom(sql<string>`pg_snapshot_xmin(pg_current_snapshot())`.as('xmin')).as('h');

/** Rows of the organization after the cursor and below the horizon `h.xmin`, in feed order. */
function afterCursor(eb: ExpressionBuilder<DB & { h: { xmin: string } }, 'h'>, p: Cursor) {
  return eb
    .selectFrom('outbox_events as e')
    .where('e.organization_id', '=', p.orgId)
    .where((w) => sql<boolean>`(${w.ref('e.txid')}, ${w.ref('e.seq')}) > (${p.txid}::xid8, ${p.seq}::bigint)`)
    .where((w) => sql<boolean>`${w.ref('e.txid')} < ${w.ref('h.xmin')}`)
    .orderBy('e.txid')
    .orderBy('e.seq');
}

const ITEM_COLUMNS = (eb: ExpressionBuilder<{ e: DB['outbox_events'] }, 'e'>) =>
  [
    eb.ref('e.id').as('id'),
    eb.ref('e.payload').as('payload'),
    sql<string>`${eb.ref('e.txid')}::text`.as('txid'),
    sql<string>`${eb.ref('e.seq')}::text`.as('seq'),
  ] as const;

/**
 * Every event type: the first `take` rows after the cursor (the page plus one, to know whether more follow). One row
 * with null event columns when none.
 */
export const FEED_PAGE = statement<Cursor & { take: number }>()((p) =>
  qb
    .selectFrom(HORIZON)
    .leftJoinLateral(
      (eb) => afterCursor(eb, p).select(ITEM_COLUMNS).limit(sql<number>`${p.take}::int`).as('i'),
      (join) => join.onTrue(),
    )
    .select([sql<string>`h.xmin::text`.as('horizon'), 'i.id', 'i.payload', 'i.txid', 'i.seq']),
);

/**
 * Some event types: the first `take` matching rows among the `window` rows after the cursor. `bound` is the window's
 * last row (found index-only: the (txid, seq) of the window-th entry), null when fewer rows than the window remain below
 * the horizon; the matching rows are read up to it, so a page over rows that do not match costs at most the window,
 * however sparse the matches.
 */
export const FEED_PAGE_OF_TYPES = statement<Cursor & { take: number; window: number; types: string[] }>()((p) =>
  qb
    .selectFrom(HORIZON)
    .leftJoinLateral(
      (eb) => afterCursor(eb, p).select(['e.txid', 'e.seq']).offset(sql<number>`${p.window}::int - 1`).limit(1).as('b'),
      (join) => join.onTrue(),
    )
    .leftJoinLateral(
      (eb) =>
        afterCursor(eb, p)
          .where('e.event', '=', sql<string>`any(${p.types}::text[])`)
          // Up to the window's last row, or to the end when the window reaches past it: an index condition (a null
          // bound spelled as an OR would be a filter, and the scan would go on to the end of the organization).
          .where(
            (w) =>
              sql<boolean>`(${w.ref('e.txid')}, ${w.ref('e.seq')}) <= (coalesce(${sql.ref('b.txid')}, ${XID8_MAX}::xid8), coalesce(${sql.ref('b.seq')}, ${BIGINT_MAX}::bigint))`,
          )
          .select(ITEM_COLUMNS)
          .limit(sql<number>`${p.take}::int`)
          .as('i'),
      (join) => join.onTrue(),
    )
    .select([
      sql<string>`h.xmin::text`.as('horizon'),
      sql<string | null>`b.txid::text`.as('boundTxid'),
      sql<string | null>`b.seq::text`.as('boundSeq'),
      'i.id',
      'i.payload',
      'i.txid',
      'i.seq',
    ]),
);
