import type { EventName } from '#core/events/names.ts';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { feedPage, HeldTransaction, horizonPast, pending } from './feed-support.ts';

/*
 * The changes feed never skips an event, however transactions interleave: many writers commit out of the order they
 * started (some roll back) while a reader pages as fast as it can, and every committed event is read exactly once.
 * The same workload, read with a plain seq cursor or a (created_at, id) cursor, loses events: each run holds one
 * "trap" transaction open, with the lowest seq and the earliest timestamp, until the reader has caught up past a later
 * commit, and only then commits it. Coordination is explicit (promises), never a sleep.
 */

const WRITERS = 8;
const TRANSACTIONS_PER_WRITER = 20;
const WINDOW = 40;
const TYPES: EventName[] = ['contact.created', 'deal.won', 'task.created', 'message.sent', 'contact.deleted'];

/** A page of any reader: the ids read, whether to call again now, and where to go on from. */
interface Reader {
  name: string;
  page(cursor: string | undefined): Promise<{ ids: string[]; next: string | undefined; hasMore: boolean }>;
  /** Events this reader is meant to return (all, or a filter). */
  wants(event: EventName): boolean;
}

/** Deterministic chance (mulberry32), so a failing run can be replayed. */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}

let t: TestApp;
let pool: pg.Pool;
beforeAll(async () => {
  t = await initTestApp({ FEED_SCAN_WINDOW: String(WINDOW) });
  pool = new pg.Pool({ connectionString: t.runtime.deps.config.DATABASE_URL, max: WRITERS + 2 });
});
afterEach(() => HeldTransaction.rollbackAll());
afterAll(async () => {
  await pool?.end();
  await t?.close();
});

interface Outcome {
  /** Committed events the reader should have returned, in the order the feed defines ((txid, seq)). */
  expected: string[];
  rolledBack: string[];
  read: string[];
  /** Transactions that committed after one that started (took its id) later: the case a naive cursor gets wrong. */
  outOfOrderCommits: number;
  pages: number;
}

/** Runs the workload in a fresh organization while `reader(orgId)` pages; what was written and what was read. */
async function run(makeReader: (org: { orgId: string; key: string }) => Reader, seed: number): Promise<Outcome> {
  const random = rng(seed);
  const { orgId, userId } = await t.newOrg();
  const key = await t.newKey({ orgId, userId, type: 'public', name: 'feed', permissions: ['events:read'] });
  const reader = makeReader({ orgId, key });
  const committedTxids: string[] = [];
  const rolledBack: string[] = [];
  const commitOrder: bigint[] = [];
  const base = Date.parse('2026-11-22T14:00:00.000Z');
  let tick = 0;
  const at = () => new Date(base + ++tick * 1000);

  // The trap: the lowest seq and the earliest timestamp of the run, committed only once the reader has caught up past
  // a later commit.
  const trap = await HeldTransaction.begin(pool);
  await trap.emit([{ ...pending(orgId, 'contact.created'), at: new Date(base) }]);
  const trapTxid = await trap.txid();
  let laterCommitted!: () => void;
  const later = new Promise<void>((r) => (laterCommitted = r));
  let caughtUpAfterLater!: () => void;
  const caughtUp = new Promise<void>((r) => (caughtUpAfterLater = r));
  let laterSeen = false;
  const trapDone = (async () => {
    await caughtUp;
    await trap.commit();
    // Not in commitOrder: the workload's own transactions must show the out-of-order commits.
    committedTxids.push(trapTxid);
  })();

  let writersDone = false;
  const writers = (async () => {
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < TRANSACTIONS_PER_WRITER; i++) {
          const held = await HeldTransaction.begin(pool);
          const events = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
            ...pending(orgId, TYPES[Math.floor(random() * TYPES.length)]!),
            at: at(),
          }));
          const ids = await held.emit(events);
          const txid = await held.txid();
          // Held open a random short while, so transactions commit out of the order they started.
          const hold = Math.floor(random() * 6);
          if (hold > 0) await new Promise((r) => setTimeout(r, hold));
          if (random() < 0.2) {
            await held.rollback();
            rolledBack.push(...ids);
          } else {
            await held.commit();
            committedTxids.push(txid);
            commitOrder.push(BigInt(txid));
            if (w === 0 && !laterSeen) {
              laterSeen = true;
              laterCommitted();
            }
          }
        }
      }),
    );
    writersDone = true;
  })();

  // The reader: as fast as it can, until the writers and the trap are done and it has caught up past all of them.
  const read: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  let trapReleased = false;
  let laterHasCommitted = false;
  void later.then(() => (laterHasCommitted = true));
  let lastPass = false;
  for (;;) {
    const startedAfterLater = laterHasCommitted;
    const final = lastPass;
    const page = await reader.page(cursor);
    pages++;
    read.push(...page.ids);
    cursor = page.next ?? cursor;
    if (page.hasMore) continue;
    if (!trapReleased && startedAfterLater) {
      trapReleased = true;
      caughtUpAfterLater();
      await trapDone;
      continue;
    }
    if (final) break;
    if (writersDone && trapReleased) {
      // Everything is committed: let the horizon pass the last of it, then read to the end once more.
      await horizonPast(t, String(commitOrder.reduce((a, b) => (a > b ? a : b), BigInt(trapTxid))));
      lastPass = true;
    }
  }
  await writers;
  const { rows } = await pool.query<{ id: string; event: EventName }>(
    'select id, event from outbox_events where organization_id = $1 and txid = any($2::xid8[]) order by txid, seq',
    [orgId, committedTxids],
  );
  let outOfOrderCommits = 0;
  for (let i = 0; i < commitOrder.length; i++) if (commitOrder.slice(i + 1).some((x) => x < commitOrder[i]!)) outOfOrderCommits++;
  return { expected: rows.filter((r) => reader.wants(r.event)).map((r) => r.id), rolledBack, read, outOfOrderCommits, pages };
}

const feedReader =
  (types?: EventName[]) =>
  ({ key }: { key: string }): Reader => ({
    name: types ? `GET /v1/events?types=${types.join(',')}` : 'GET /v1/events',
    wants: (e) => !types || types.includes(e),
    page: async (after) => {
      const page = await feedPage(t, key, { limit: 7, ...(after ? { after } : {}), ...(types ? { types: types.join(',') } : {}) });
      return { ids: page.items.map((i) => i.id), next: page.nextCursor, hasMore: page.hasMore };
    },
  });

/** What an id or timestamp cursor does: the rows after the last one read, in that order. */
const naiveReader =
  (order: 'seq' | 'created_at') =>
  ({ orgId }: { orgId: string }): Reader => ({
    name: `a ${order} cursor`,
    wants: () => true,
    page: async (after) => {
      const [a, b] = after ? (JSON.parse(after) as [string, string]) : ['0', '00000000-0000-0000-0000-000000000000'];
      const { rows } = await pool.query<{ id: string; k: string }>(
        order === 'seq'
          ? 'select id, seq::text as k from outbox_events where organization_id = $1 and seq > $2::bigint order by seq limit 7'
          : `select id, to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SS.US') as k from outbox_events
             where organization_id = $1 and (created_at, id) > (coalesce(nullif($2, '0')::timestamp, '-infinity'), $3::uuid)
             order by created_at, id limit 7`,
        order === 'seq' ? [orgId, a] : [orgId, a, b],
      );
      const last = rows.at(-1);
      return { ids: rows.map((r) => r.id), next: last ? JSON.stringify([last.k, last.id]) : after, hasMore: rows.length === 7 };
    },
  });

describe('the changes feed under concurrent writers', () => {
  it.each([
    ['every event, over HTTP', feedReader(), 1],
    ['a filter of some types (pages bounded by a small window), over HTTP', feedReader(['contact.created', 'contact.deleted']), 2],
  ])('reads every committed event exactly once and no rolled-back one: %s', async (_, reader, seed) => {
    const o = await run(reader, seed);
    expect(o.outOfOrderCommits, 'the workload commits out of start order').toBeGreaterThan(0);
    expect(o.rolledBack.length, 'the workload rolls some back').toBeGreaterThan(0);
    expect(new Set(o.read).size, 'read twice').toBe(o.read.length);
    expect(o.read.filter((id) => o.rolledBack.includes(id))).toEqual([]);
    expect(o.read).toEqual(o.expected);
    expect(o.pages).toBeGreaterThan(5);
  });

  it.each([
    ['seq', naiveReader('seq')],
    ['(created_at, id)', naiveReader('created_at')],
  ])('the same workload read with a plain %s cursor skips events', async (_, reader) => {
    const o = await run(reader, 1);
    const missed = o.expected.filter((id) => !o.read.includes(id));
    expect(missed.length).toBeGreaterThan(0);
  });
});
