import { FEED_PAGE } from '#core/feed/sql.ts';
import { openDb, openOrm, type Db, type MikroORM } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * docs/scaling.md, "Time partitioning", checked on a copy of outbox_events partitioned by month on created_at: the
 * feed's page statement as it is today reads every partition (its cursor is a transaction id, not a time), and the
 * same statement with the lower time bound the doc proposes reads only the partitions from the cursor's month on,
 * under the generic plan a running server settles on (pruning at execution time, the bound being a parameter).
 */
const MONTHS = 13;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Subplans Removed'?: number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

describe('the feed on a time-partitioned outbox', () => {
  let test: TestDatabase;
  let orm: MikroORM;
  let db: Db;
  let org: string;
  const start = new Date(Date.UTC(2025, 10, 1));
  const month = (i: number) => new Date(Date.UTC(2025, 10 + i, 1)).toISOString();

  beforeAll(async () => {
    test = await createTestDatabase('partition_plans', { migrated: true });
    orm = await openOrm(test.url, { pool: { min: 0, max: 1 } });
    db = await openDb(orm);
    await db.raw('alter table outbox_events rename to outbox_events_flat');
    await db.raw(`create table outbox_events (like outbox_events_flat including defaults) partition by range (created_at)`);
    await db.raw('alter table outbox_events add primary key (id, created_at)');
    await db.raw('create index outbox_events_p_feed_idx on outbox_events (organization_id, txid, seq)');
    for (let i = 0; i < MONTHS; i++) {
      await db.raw(`create table outbox_events_m${i} partition of outbox_events for values from ('${month(i)}') to ('${month(i + 1)}')`);
    }
    const { rows } = await db.raw(`insert into organizations (name) values ('Partitioned') returning id`);
    org = (rows[0] as { id: string }).id;
    // 300 events a month, in time order as the outbox writes them; transaction ids rise with time.
    await db.raw(
      `insert into outbox_events (organization_id, event, payload, created_at, txid)
       select $1, 'contact.updated', '{}'::jsonb, $2::timestamptz + g * interval '1 hour', (1000 + g)::text::xid8
       from generate_series(0, ${MONTHS * 300 - 1}) g`,
      [org, start],
    );
    await db.raw('analyze outbox_events');
  });
  afterAll(async () => {
    await orm?.close(true);
    await test?.drop();
  });

  /** The partitions a generic-plan execution of `text` read, given `args` as SQL literals. */
  async function partitionsRead(text: string, args: string[]): Promise<string[]> {
    return db.transaction(async (tx) => {
      await tx.raw('set local plan_cache_mode = force_generic_plan');
      await tx.raw(`prepare probe as ${text}`);
      const { rows } = await tx.raw(`explain (analyze, format json) execute probe(${args.join(', ')})`);
      await tx.raw('deallocate probe');
      const plan = (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan;
      return nodes(plan)
        .map((n) => n['Relation Name'])
        .filter((r): r is string => r?.startsWith('outbox_events_m') ?? false);
    });
  }

  /** Feed parameters in the statement's own order: a cursor in the last month, so a page reads the newest events. */
  function feedArgs(): string[] {
    const values: Record<string, string> = { orgId: `'${org}'`, txid: `'${1000 + (MONTHS - 1) * 300 + 10}'`, seq: "'0'", take: '26' };
    return FEED_PAGE.slots.map((s) => ('param' in s ? values[s.param]! : String(s.value)));
  }

  it('today: the page statement reads every partition, its cursor being a transaction id', async () => {
    const read = await partitionsRead(FEED_PAGE.text, feedArgs());
    expect(new Set(read).size).toBe(MONTHS);
  });

  it('with a lower time bound from the cursor: only the partitions from the cursor month on', async () => {
    const bounded = FEED_PAGE.text.replace(
      /("e"\."organization_id" = \$\d+)/,
      `$1 and "e"."created_at" >= $${FEED_PAGE.slots.length + 1}::timestamptz`,
    );
    expect(bounded).not.toBe(FEED_PAGE.text);
    // The cursor's own time less the slack (an hour here): the page needs the last month only.
    const read = await partitionsRead(bounded, [...feedArgs(), `'${month(MONTHS - 1)}'::timestamptz - interval '1 hour'`]);
    expect(new Set(read).size).toBeLessThanOrEqual(2);
    expect(read).toContain(`outbox_events_m${MONTHS - 1}`);
  });
});
