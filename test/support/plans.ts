import { type Db, type PgDb, type Query, type Statement, TxDb } from '@leadwire/db';
import { bind } from '#db/statements.ts';
import type { PoolClient } from 'pg';

/**
 * Plans of the statements a service runs, as a long-running server executes them: prepared, with the generic plan
 * (planned for an average organization), under EXPLAIN (ANALYZE, BUFFERS). Shared by the large-organization plan tests
 * and `npm run bench:scale`.
 */

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** One statement's executed plan: its text, its root node and how long it ran. */
export interface ExplainedStatement {
  key: string;
  text: string;
  plan: PlanNode;
  executionMs: number;
}

/**
 * Runs `load(from, to)` over 1..total in slices of `slice`, each statement its own transaction. The changes feed reads
 * below the oldest transaction still open in the whole cluster (`pg_snapshot_xmin`), which every test file's database
 * shares: one statement writing a million rows held every other file's feed reads (and the tests waiting for the feed
 * to catch up) for its whole length, seconds on a loaded run. A slice holds them for a fraction of a second.
 */
export async function inSlices(total: number, slice: number, load: (from: number, to: number) => Promise<unknown>): Promise<void> {
  for (let from = 1; from <= total; from += slice) await load(from, Math.min(total, from + slice - 1));
}

/**
 * Loads a large table as a restore does: its indexes that back no constraint are dropped, `load` fills the table, and
 * each index is built again from its own definition (`pg_get_indexdef`: the same name, columns, expression and
 * predicate). One sort per index instead of an index insertion per row and index: the changes feed's million events
 * load in about a quarter less time (4.8-5.8 s -> 3.9-4.2 s, issue 26), over the same indexes and rows.
 */
export async function withIndexesBuiltAfter(
  query: (text: string) => Promise<unknown[]>,
  table: string,
  load: () => Promise<void>,
): Promise<void> {
  const indexes = (await query(
    `select indexrelid::regclass::text as name, pg_get_indexdef(indexrelid) as definition from pg_index i
     where indrelid = '${table}'::regclass and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
  )) as { name: string; definition: string }[];
  for (const { name } of indexes) await query(`drop index ${name}`);
  await load();
  for (const { definition } of indexes) await query(definition);
}

export const planNodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(planNodes)];

/** Named by its start and its end: the column lists in between say little about the statement. */
export function statementKey(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 60)} ... ${flat.slice(-140)}` : flat;
}

type Client = Pick<PoolClient, 'query' | 'escapeLiteral'>;

/**
 * Runs `statement` under `explain (analyze, buffers)` with the generic plan on `client`, inside `begin`/`rollback` or,
 * in a transaction, a savepoint: its effects are undone, and the real statement then runs as the service meant it to.
 */
export async function explainOn(client: Client, inTx: boolean, statement: string, params: unknown[]): Promise<ExplainedStatement> {
  // EXPLAIN EXECUTE takes no bind parameters: the values go in as literals.
  const text = (v: unknown): string =>
    v instanceof Date ? v.toISOString() : Array.isArray(v) ? `{${v.map((x) => JSON.stringify(String(x))).join(',')}}` : String(v);
  const literal = (v: unknown) => (v === null || v === undefined ? 'null' : client.escapeLiteral(text(v)));
  await client.query(inTx ? 'savepoint explained' : 'begin');
  try {
    await client.query('set local plan_cache_mode = force_generic_plan');
    await client.query(`prepare explained as ${statement}`);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(
      `explain (analyze, buffers, format json) execute explained${params.length ? `(${params.map(literal).join(', ')})` : ''}`,
    );
    const out = rows[0]!['QUERY PLAN'][0];
    return { key: statementKey(statement), text: statement, plan: out.Plan, executionMs: out['Execution Time'] };
  } finally {
    await client.query(inTx ? 'rollback to savepoint explained' : 'rollback');
    await client.query('deallocate explained');
  }
}

/** Every node of `stmt`'s executed generic plan, on a connection of `db`'s pool, as a long-running server plans it. */
export async function genericPlanNodes<P>(db: PgDb, stmt: Statement<P, unknown>, params: P): Promise<PlanNode[]> {
  const client = await db.pool.connect();
  try {
    return planNodes((await explainOn(client, false, stmt.text, bind(stmt, params))).plan);
  } finally {
    client.release();
  }
}

/** The same Db; every statement it (or a transaction it opens) runs is explained first and handed to `seen`. */
export function explaining(db: Db, seen: (s: ExplainedStatement) => void): Db {
  const explain = async (target: Db, text: string, params: unknown[]) => {
    if (target instanceof TxDb) seen(await explainOn(target.client, true, text, params));
    else {
      const client = await (target as PgDb).pool.connect();
      try {
        seen(await explainOn(client, false, text, params));
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
      if (prop === 'transaction') return <T>(fn: (tx: TxDb) => Promise<T>) => target.transaction((tx) => fn(explaining(tx, seen) as TxDb));
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The rows (or index entries) of `tables` that the busiest node of the plan went through. */
export function rowsTouched(node: PlanNode, tables: readonly string[]): number {
  const onLarge = tables.includes(node['Relation Name'] ?? '') || tables.some((t) => node['Index Name']?.startsWith(`${t}_`));
  const own = onLarge
    ? (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) +
      (node['Rows Removed by Filter'] ?? 0) +
      (node['Rows Removed by Index Recheck'] ?? 0)
    : 0;
  return Math.max(own, ...(node.Plans ?? []).map((n) => rowsTouched(n, tables)));
}

/** Shared buffers the statement went through (hit or read); the root's figures include its children's. */
export const buffersOf = (root: PlanNode): number => (root['Shared Hit Blocks'] ?? 0) + (root['Shared Read Blocks'] ?? 0);

/** Sequential scans of `tables`: each is a read of the whole table. */
export const seqScansOf = (root: PlanNode, tables: readonly string[]): string[] =>
  planNodes(root)
    .filter((n) => n['Node Type'].includes('Seq Scan') && tables.includes(n['Relation Name'] ?? ''))
    .map((n) => n['Relation Name']!);

/** Index scans in the plan: each descends a b-tree, one page more per level as the table grows. */
export const indexScansOf = (root: PlanNode): number => planNodes(root).filter((n) => n['Index Name'] !== undefined).length;
