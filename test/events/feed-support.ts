import { emitEvents, type PendingEvent } from '#core/events/outbox.ts';
import type { EventName } from '#core/events/names.ts';
import { TxDb } from '@leadwire/db';
import type { Pool, PoolClient } from 'pg';
import { call, type TestApp } from '../support/app.ts';

/** What the feed answers, read over HTTP. */
export interface FeedPage {
  items: { id: string; event: string; timestamp: string; source?: string; data: Record<string, unknown> }[];
  nextCursor: string;
  hasMore: boolean;
}

export async function feed(t: TestApp, key: string, query: Record<string, string | number> = {}) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  return call(t, 'GET', `/events${qs ? `?${qs}` : ''}`, { key });
}

export async function feedPage(t: TestApp, key: string, query: Record<string, string | number> = {}): Promise<FeedPage> {
  const res = await feed(t, key, query);
  if (res.status !== 200) throw new Error(`GET /events answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as FeedPage;
}

/** Pages from `after` until `hasMore` is false; the items read and the cursor to poll with. */
export async function readAll(t: TestApp, key: string, query: Record<string, string | number> = {}) {
  const items: FeedPage['items'] = [];
  let after = query.after;
  let pages = 0;
  for (;;) {
    const page = await feedPage(t, key, { ...query, ...(after !== undefined ? { after } : {}) });
    items.push(...page.items);
    pages++;
    after = page.nextCursor;
    if (!page.hasMore) return { items, cursor: page.nextCursor, pages };
  }
}

export const pending = (orgId: string, event: EventName, data: Record<string, unknown> = {}, at = new Date()): PendingEvent => ({
  orgId,
  event,
  source: 'api',
  data,
  at,
});

/**
 * Waits until the feed's horizon (the oldest transaction running anywhere on the cluster: other test files' databases
 * share it) has passed `txid`, so its events are readable. Waits for something to happen; never used to prove that
 * something did not.
 */
export async function horizonPast(t: TestApp, txid: string): Promise<void> {
  for (let i = 0; ; i++) {
    const [row] = await t.sql<{ past: boolean }>('select pg_snapshot_xmin(pg_current_snapshot()) > ?::xid8 as past', [txid]);
    if (row?.past) return;
    if (i > 6_000) throw new Error(`the horizon stayed at or below ${txid} for 30 s: a transaction left open?`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits until every transaction that has committed so far is below the horizon: their events are readable. */
export async function settle(t: TestApp): Promise<void> {
  const [row] = await t.sql<{ txid: string }>('select pg_current_xact_id()::text as txid');
  await horizonPast(t, row!.txid);
}

/** Writes events in a transaction of their own, committed and readable from the feed; their outbox ids in order. */
export async function emit(t: TestApp, events: PendingEvent[]): Promise<string[]> {
  const { ids, txid } = await commitEvents(t, events);
  await horizonPast(t, txid);
  return ids;
}

/** Writes events in a transaction of their own and commits, without waiting for the horizon; their ids and txid. */
export async function commitEvents(t: TestApp, events: PendingEvent[]): Promise<{ ids: string[]; txid: string }> {
  return t.runtime.deps.db.transaction(async (tx) => {
    await emitEvents(tx, events);
    const rows = (await tx.raw('select id, txid::text from outbox_events where txid = pg_current_xact_id() order by seq')).rows;
    return { ids: (rows as { id: string }[]).map((r) => r.id), txid: (rows[0] as { txid: string }).txid };
  });
}

/**
 * A transaction the test drives by hand on a connection of its own: begin, write, then commit or roll back when the
 * test says, so that commit order is the test's choice and not the scheduler's.
 */
export class HeldTransaction {
  /** Still open: `rollbackAll` ends them after a failed test, so the horizon is not held for the tests that follow. */
  private static readonly open = new Set<HeldTransaction>();
  private readonly client: PoolClient;
  readonly tx: TxDb;
  private constructor(client: PoolClient) {
    this.client = client;
    this.tx = new TxDb(client);
  }

  static async begin(pool: Pool): Promise<HeldTransaction> {
    const client = await pool.connect();
    await client.query('begin');
    // The transaction takes its id now, as a writer's first insert would: it is "running" from here on.
    await client.query('select pg_current_xact_id()');
    const held = new HeldTransaction(client);
    HeldTransaction.open.add(held);
    return held;
  }

  static async rollbackAll(): Promise<void> {
    await Promise.all([...HeldTransaction.open].map((h) => h.rollback()));
  }

  /** Writes events; their outbox ids in order. */
  async emit(events: PendingEvent[]): Promise<string[]> {
    await emitEvents(this.tx, events);
    const { rows } = await this.client.query<{ id: string }>('select id from outbox_events where txid = pg_current_xact_id() order by seq');
    return rows.map((r) => r.id);
  }

  /** This transaction's id (xid8 as text). */
  async txid(): Promise<string> {
    const { rows } = await this.client.query<{ txid: string }>('select pg_current_xact_id()::text as txid');
    return rows[0]!.txid;
  }

  async commit(): Promise<void> {
    HeldTransaction.open.delete(this);
    try {
      await this.client.query('commit');
    } finally {
      this.client.release();
    }
  }

  async rollback(): Promise<void> {
    HeldTransaction.open.delete(this);
    try {
      await this.client.query('rollback');
    } finally {
      this.client.release();
    }
  }
}
