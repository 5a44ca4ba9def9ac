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
 * Some event types: the first `take` matching rows among the `window` rows after the cursor. The window is a subquery
 * with its own limit, read in feed order from the index, and the type is filtered outside it: so no plan can trade
 * the walk for a scan of every row of that type (the planner would, for a rare type, and read the whole table), and a
 * page over rows that do not match costs at most the window, however sparse the matches. `bound` is the window's last
 * row (index-only: the (txid, seq) of the window-th entry), null when fewer rows than the window remain below the
 * horizon: where the next page starts when this one ends without filling.
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
        eb
          .selectFrom(
            afterCursor(eb, p).select(['e.id', 'e.event', 'e.payload', 'e.txid', 'e.seq']).limit(sql<number>`${p.window}::int`).as('w'),
          )
          .where('w.event', '=', sql<string>`any(${p.types}::text[])`)
          .select((s) => [
            s.ref('w.id').as('id'),
            s.ref('w.payload').as('payload'),
            sql<string>`${s.ref('w.txid')}::text`.as('txid'),
            sql<string>`${s.ref('w.seq')}::text`.as('seq'),
          ])
          .orderBy('w.txid')
          .orderBy('w.seq')
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
