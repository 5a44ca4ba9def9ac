import { authenticate } from '#core/auth/authenticate.ts';
import { batchUpsertContacts } from '#core/contacts/v1/batch.ts';
import { upsertContact } from '#core/contacts/v1/upsert.ts';
import { KeyGuard } from '#core/limits/key-guard.ts';
import { type Db, type PgDb, type Query, type Statement, TxDb } from '@leadwire/db';
import { bind } from '#db/statements.ts';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';

/**
 * A long-running server executes its prepared statements with generic plans, planned for an average organization. In
 * a database of many small organizations and one large one, a plan that scans "the organization's contacts" looks
 * cheap and is linear in the large one's size on every write: the partners who send the most would pay the most per
 * row. Every statement the upsert paths run must touch the contacts it writes, not the organization's.
 */

const BIG_ORG_CONTACTS = 30_000;
/** Far below the large organization's size and far above what any one request names (a batch is 100 rows). */
const TOUCH_LIMIT = 1_000;

type Client = Pick<PoolClient, 'query' | 'escapeLiteral'>;

/** The rows of large tables each statement went through, by statement, measured by running it under EXPLAIN ANALYZE first (undone). */
type Touched = Map<string, number>;

/**
 * Runs `statement` under `explain analyze` with the generic plan on `client`, inside `begin`/`rollback` or, in a
 * transaction, a savepoint: its effects are undone, and the real statement then runs as the service meant it to.
 */
async function explainOn(client: Client, inTx: boolean, statement: string, params: unknown[], touched: Touched): Promise<void> {
  // EXPLAIN EXECUTE takes no bind parameters: the values go in as literals.
  const text = (v: unknown): string =>
    v instanceof Date ? v.toISOString() : Array.isArray(v) ? `{${v.map((x) => JSON.stringify(String(x))).join(',')}}` : String(v);
  const literal = (v: unknown) => (v === null || v === undefined ? 'null' : client.escapeLiteral(text(v)));
  await client.query(inTx ? 'savepoint explained' : 'begin');
  try {
    await client.query('set local plan_cache_mode = force_generic_plan');
    await client.query(`prepare explained as ${statement}`);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `explain (analyze, format json) execute explained(${params.map(literal).join(', ')})`,
    );
    // Named by its start and its end: the column lists in between say little about the statement.
    const flat = statement.replace(/\s+/g, ' ').trim();
    const key = flat.length > 200 ? `${flat.slice(0, 60)} ... ${flat.slice(-140)}` : flat;
    touched.set(key, Math.max(touched.get(key) ?? 0, rowsTouched(rows[0]!['QUERY PLAN'][0].Plan)));
  } finally {
    await client.query(inTx ? 'rollback to savepoint explained' : 'rollback');
    await client.query('deallocate explained');
  }
}

/** The same Db; every statement it (or a transaction it opens) runs is explained first. */
function explaining(db: Db, touched: Touched): Db {
  const explain = async (target: Db, text: string, params: unknown[]) => {
    if (target instanceof TxDb) await explainOn(target.client, true, text, params, touched);
    else {
      const client = await (target as PgDb).pool.connect();
      try {
        await explainOn(client, false, text, params, touched);
      } finally {
        client.release();
      }
    }
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'run') {
        return async <P, R>(stmt: Statement<P, R>, params: P) => {
          await explain(target, stmt.text, bind(stmt, params));
          return target.run(stmt, params);
        };
      }
      if (prop === 'query') {
        return async <R>(q: Query<R>) => {
          const c = 'compile' in q ? q.compile() : q;
          await explain(target, c.sql, [...c.parameters]);
          return target.query(q);
        };
      }
      if (prop === 'transaction')
        return <T>(fn: (tx: TxDb) => Promise<T>) => target.transaction((tx) => fn(explaining(tx, touched) as TxDb));
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

interface PlanNode {
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The tables whose rows grow with an organization. */
const LARGE = ['contacts', 'companies'];

/** The most rows (or index entries) of a large table that any one node of the plan went through. */
function rowsTouched(node: PlanNode): number {
  const onLarge = LARGE.includes(node['Relation Name'] ?? '') || LARGE.some((t) => node['Index Name']?.startsWith(`${t}_`));
  const own = onLarge
    ? (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) +
      (node['Rows Removed by Filter'] ?? 0) +
      (node['Rows Removed by Index Recheck'] ?? 0)
    : 0;
  return Math.max(own, ...(node.Plans ?? []).map(rowsTouched));
}

describe('upsert statements in a database with one large organization among many small ones', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await initTestApp();
    const big = await t.newOrg({ plan: 'max' });
    key = big.publicKey;
    for (let i = 0; i < 40; i++) {
      const { orgId } = await t.newOrg();
      await t.sql(
        `insert into contacts (organization_id, email, tags, source, lead_score) select ?, 's' || g || '@small.example', '{}', 'api', 0 from generate_series(1, 20) g`,
        [orgId],
      );
      await t.sql(`insert into companies (organization_id, domain) select ?, 'co' || g || '.example' from generate_series(1, 5) g`, [
        orgId,
      ]);
    }
    await t.sql(
      `insert into contacts (organization_id, email, first_name, last_name, tags, source, lead_score)
       select ?, 'c' || g || '@big.example', 'Seed', 'Contact', '{seed}', 'api', 0 from generate_series(1, ?::int) g`,
      [big.orgId, BIG_ORG_CONTACTS],
    );
    await t.sql(`insert into companies (organization_id, domain) select ?, 'co' || g || '.example' from generate_series(1, ?::int) g`, [
      big.orgId,
      BIG_ORG_CONTACTS / 5,
    ]);
    await t.sql('update contact_counters set contact_count = ? where organization_id = ?', [BIG_ORG_CONTACTS, big.orgId]);
    await t.sql('analyze');
  }, 60_000);
  afterAll(() => t?.close());

  it('touch the rows they name, not the organization: checked on the generic plans a running server uses', async () => {
    const touched: Touched = new Map();
    const db = explaining(t.runtime.deps.db, touched);
    const now = t.clock.now();
    const { actor } = await authenticate(db, `Bearer ${key}`, 'public', { now, guard: new KeyGuard(), setHeader: () => {} });
    const opts = { eventSource: 'api' as const, now };
    const row = (email: string) => ({ email, firstName: 'Ada', lastName: 'Lovelace', tags: ['bench'], custom: { plan: 'trial' } });
    const updated = await upsertContact(db, actor, row('c7@big.example'), opts);
    const created = await upsertContact(db, actor, row('new-one@big.example'), opts);
    expect([updated.created, created.created]).toEqual([false, true]);
    const rows = Array.from({ length: 100 }, (_, i) => ({
      ...row(i % 2 ? `c${100 + i}@big.example` : `new-${i}@big.example`),
      ...(i % 10 === 0 ? { companyDomain: `co${i + 1}.example` } : {}),
    }));
    const batch = await batchUpsertContacts(db, actor, rows, opts);
    expect([batch.created, batch.updated, batch.failed]).toEqual([50, 50, 0]);

    expect(touched.size).toBeGreaterThanOrEqual(6);
    expect([...touched].filter(([, rows]) => rows >= TOUCH_LIMIT)).toEqual([]);
  });
});
