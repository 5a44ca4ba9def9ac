import { FEED_PAGE, FEED_PAGE_OF_TYPES } from '#core/feed/sql.ts';
import type { Statement } from '@leadwire/db';
import { bind } from '#db/statements.ts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { inSlices, type PlanNode, planNodes, withIndexesBuiltAfter } from '../support/plans.ts';

/**
 * The changes feed in a database where one workspace holds 1,000,000 events among many small ones. A page must walk
 * outbox_events_feed_idx from its cursor, whatever the cursor, never sort and never scan the organization (nor every
 * event of a rare type): checked on the custom plans a server starts with and the generic plans it settles on, with
 * EXPLAIN ANALYZE counting the rows each node went through.
 */

const BIG = 1_000_000;
const SMALL_ORGS = 100;
const SMALL_EVENTS = 200;
/** A page's size plus one, and the window a filtered page walks at most (FEED_SCAN_WINDOW's default). */
const TAKE = 26;
const WINDOW = 1_000;

let t: TestApp;
let client: pg.Client;
let bigOrg: string;
/** A position in the middle of the big organization's feed. */
let middle: { txid: string; seq: string };

beforeAll(async () => {
  t = await initTestApp();
  client = new pg.Client({ connectionString: t.runtime.deps.config.DATABASE_URL });
  await client.connect();
  bigOrg = (await t.newOrg({ plan: 'max' })).orgId;
  const small = await t.sql<{ id: string }>(
    'insert into organizations (name) select ? || g from generate_series(1, ?::int) g returning id',
    ['Small ', SMALL_ORGS],
  );
  // The events' transactions: spread over the ids already used, so every row is below the horizon as real ones are.
  const [{ cur }] = (await client.query<{ cur: string }>('select pg_current_xact_id()::text as cur')).rows as [{ cur: string }];
  // Setting up a million rows must take seconds, not minutes: in this test's own database the table skips the WAL
  // (unlogged), and the load skips the triggers that queue each event for dispatch and the foreign-key checks
  // (replica role). None of it changes what the planner sees: the rows, their statistics, the indexes.
  await client.query('alter table outbox_events set unlogged');
  await client.query('set session_replication_role = replica');
  // Built by the database alone, in slices of one statement each (inSlices says why): the shape of stored events, not
  // their content.
  const payload = (event: string) => `'{"event":"${event}","timestamp":"2026-11-22T14:03:07.123Z","source":"api","data":{}}'::jsonb`;
  const event = `case when g % 10000 = 0 then 'form.submitted' when g % 3 = 0 then 'deal.updated' else 'contact.updated' end`;
  const insert = (orgs: string, id: string) => `insert into outbox_events (id, organization_id, event, payload, created_at, txid)
    select lpad(to_hex(${id}), 32, '0')::uuid, ${orgs}, ${event},
           case when g % 10000 = 0 then ${payload('form.submitted')} when g % 3 = 0 then ${payload('deal.updated')} else ${payload('contact.updated')} end,
           timestamptz '2026-11-01', (1 + g::bigint * ($1::bigint - 2) / $2::bigint)::text::xid8`;
  await withIndexesBuiltAfter(
    async (text) => (await client.query(text)).rows,
    'outbox_events',
    async () => {
      await inSlices(BIG, 50_000, (from, to) =>
        client.query(`${insert('$3::uuid', 'g')} from generate_series($4::int, $5::int) g`, [cur, BIG, bigOrg, from, to]),
      );
      await client.query(
        `${insert('o.id', '$4::bigint + o.k * $2::bigint + g')} from unnest($3::uuid[]) with ordinality o(id, k), generate_series(1, $2::int) g`,
        [cur, SMALL_EVENTS, small.map((o) => o.id), BIG],
      );
    },
  );
  await client.query('reset session_replication_role');
  await client.query('analyze outbox_events');
  // The big organization's events are numbered 1..BIG in feed order (ids and transactions both grow with g).
  const { rows } = await client.query<{ txid: string; seq: string }>(
    `select txid::text, seq::text from outbox_events where id = lpad(to_hex($1::int), 32, '0')::uuid`,
    [BIG / 2],
  );
  middle = rows[0]!;
}, 120_000);
afterAll(async () => {
  await client?.end();
  await t?.close();
});

type Mode = 'generic' | 'custom';

/** The generic or custom plan of `stmt` run with `params`, executed (EXPLAIN ANALYZE), as a list of its nodes. */
async function plan<P>(stmt: Statement<P, unknown>, params: P, mode: Mode): Promise<PlanNode[]> {
  // EXPLAIN EXECUTE takes no bind parameters: the values (text, numbers, a text array) go in as literals.
  const literal = (v: unknown) =>
    client.escapeLiteral(Array.isArray(v) ? `{${v.map((x) => JSON.stringify(String(x))).join(',')}}` : `${v as string | number}`);
  await client.query('begin');
  try {
    await client.query(`set local plan_cache_mode = force_${mode}_plan`);
    await client.query(`prepare explained as ${stmt.text}`);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `explain (analyze, format json) execute explained(${bind(stmt, params).map(literal).join(', ')})`,
    );
    return planNodes(rows[0]!['QUERY PLAN'][0].Plan);
  } finally {
    await client.query('rollback');
    await client.query('deallocate explained');
  }
}

/** Holds the plan to the feed index, with no sort, and returns the most index entries or rows any outbox scan went through. */
function walked(all: PlanNode[]): number {
  expect(all.filter((n) => n['Node Type'] === 'Sort' || n['Node Type'].includes('Seq Scan'))).toEqual([]);
  const scans = all.filter((n) => n['Relation Name'] === 'outbox_events');
  expect(scans.length).toBeGreaterThan(0);
  for (const s of scans) expect(s['Index Name'], s['Node Type']).toBe('outbox_events_feed_idx');
  return Math.max(
    ...scans.map(
      (s) =>
        (s['Actual Rows'] ?? 0) * (s['Actual Loops'] ?? 1) + (s['Rows Removed by Filter'] ?? 0) + (s['Rows Removed by Index Recheck'] ?? 0),
    ),
  );
}

// A server plans a prepared statement for its values first (custom plans), then for any (generic): both must walk.
describe.each(['custom', 'generic'] as const)('the changes feed in a workspace of 1,000,000 events, %s plans', (mode) => {
  const start = { txid: '0', seq: '0' };

  it('a page walks the feed index from its cursor and reads the page, wherever the cursor is', async () => {
    for (const at of [start, middle]) {
      const p = await plan(FEED_PAGE, { orgId: bigOrg, ...at, take: TAKE }, mode);
      expect(walked(p)).toBe(TAKE);
    }
  });

  it('a filtered page reads at most its window, however rare the events it asks for', async () => {
    for (const at of [start, middle]) {
      // Common: the page fills long before the window ends.
      const common = await plan(FEED_PAGE_OF_TYPES, { orgId: bigOrg, ...at, take: TAKE, window: WINDOW, types: ['deal.updated'] }, mode);
      expect(walked(common)).toBeLessThanOrEqual(WINDOW);
      // Rare (one in 10,000): the window ends first.
      const rare = await plan(FEED_PAGE_OF_TYPES, { orgId: bigOrg, ...at, take: TAKE, window: WINDOW, types: ['form.submitted'] }, mode);
      expect(walked(rare)).toBeLessThanOrEqual(WINDOW);
    }
  });

  it('the bound of the window is found in the index alone', async () => {
    const p = await plan(FEED_PAGE_OF_TYPES, { orgId: bigOrg, ...middle, take: TAKE, window: WINDOW, types: ['form.submitted'] }, mode);
    const bound = p.find((n) => n['Node Type'] === 'Index Only Scan');
    expect(bound).toMatchObject({ 'Index Name': 'outbox_events_feed_idx', 'Actual Rows': WINDOW });
  });
});
