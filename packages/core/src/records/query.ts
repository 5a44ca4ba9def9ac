import { sql, type Db, type Statement } from '@leadwire/db';
import type { Expression, ExpressionBuilder, SqlBool } from '@leadwire/db';
import { errors } from '../errors.ts';
import { type IdList, refuseForeignCursor, toPage, type PageParams } from './pagination.ts';

/**
 * The list and get of a CRM record type (deals, tasks, bookings, AI actions), written once. Each record type keeps
 * its own statements (its table, its visibility rule, its filters, its columns) and its own view; these run them the
 * same way: a page is `limit + 1` rows newest first, and a get is the record of the caller's organization or 404.
 */

/** A record's id in the caller's organization: a foreign id looks unknown. */
export interface ById {
  orgId: string;
  id: string;
}

/** What a list request carries besides its filters. */
export interface PageInput {
  limit: number;
  cursor?: string | undefined;
}

/** A page of `stmt`'s rows (filters `filters`) from `table`, as views; a cursor that is no row of `table` is refused. */
export async function listRecords<F extends object, R extends { id: string }, V>(
  db: Db,
  table: IdList,
  stmt: Statement<F & PageParams, R>,
  orgId: string,
  page: PageInput,
  filters: F,
  view: (r: R) => V,
) {
  const rows = await db.run(stmt, { ...filters, orgId, cursor: page.cursor ?? null, limit: page.limit + 1 });
  await refuseForeignCursor(db, table, { orgId, cursor: page.cursor }, rows);
  return toPage(rows, page.limit, view);
}

/** The row `stmt` finds for `id`, or 404 `No ${what} with id ...`. */
export async function requireRecord<R>(db: Db, stmt: Statement<ById, R>, orgId: string, id: string, what: string): Promise<R> {
  const [row] = await db.run(stmt, { orgId, id });
  if (!row) throw errors.notFound(`No ${what} with id ${id}`);
  return row;
}

export async function getRecord<R, V>(
  db: Db,
  stmt: Statement<ById, R>,
  orgId: string,
  id: string,
  what: string,
  view: (r: R) => V,
): Promise<V> {
  return view(await requireRecord(db, stmt, orgId, id, what));
}

/**
 * An optional filter of a fixed statement: true when the parameter is null, else `cond`. One statement serves every
 * combination of filters, prepared once; `type` is the parameter's SQL type, which `is null` alone cannot tell.
 */
export const ifGiven = <DBX, TB extends keyof DBX>(
  eb: ExpressionBuilder<DBX, TB>,
  value: string | null,
  type: 'uuid' | 'text',
  cond: Expression<SqlBool>,
): Expression<SqlBool> => eb.or([sql<boolean>`${value}::${sql.raw(type)} is null`, cond]);

/** `columns` qualified by `alias`, for a select over a join where bare names would be ambiguous. */
export const qualified = <A extends string, C extends string>(alias: A, columns: readonly C[]) =>
  columns.map((c) => `${alias}.${c}` as const);
