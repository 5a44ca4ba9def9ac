import { type Db, qb, sql, statement, type DB } from '@leadwire/db';
import { AppError } from '../errors.ts';
import type { Expression, Selectable, SelectQueryBuilder, SqlBool } from '@leadwire/db';
import { z } from 'zod';

/**
 * Keyset pagination over (created_at, id), newest first. The cursor is the id of the last item of the previous page:
 * opaque to clients, stable under inserts, and an id from another organization simply ends the list.
 * A plain number: on REST it arrives as a query string and the adapter coerces it.
 */
export const PageFields = {
  limit: z.number().int().min(1).max(100, 'limit must be at most 100').default(25).meta({ description: 'Page size, 1-100 (default 25).' }),
  cursor: z.uuid().optional().meta({ description: 'nextCursor of the previous page.' }),
};

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    nextCursor: z.uuid().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  });

/** Rows fetched with `limit + 1`: the extra row only says whether there is a next page. */
export function toPage<R extends { id: string }, V>(rows: readonly R[], limit: number, view: (r: R) => V) {
  const items = rows.slice(0, limit);
  return { items: items.map(view), nextCursor: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
}

/** The tables a keyset page can walk: an id, a creation time and an owning organization. */
export type KeyedTable = {
  [T in keyof DB]: Selectable<DB[T]> extends { id: string; created_at: Date; organization_id: string } ? T : never;
}[keyof DB];

/** A page's parameters as a statement takes them; `limit` is the page size plus the one row that says "more". */
export interface PageParams {
  orgId: string;
  cursor: string | null;
  limit: number;
}

/** The keyed table whose rows `R` (a query's alias) are: never when `R` is no keyed table's row. */
type TableOf<R> = { [T in KeyedTable]: [R] extends [DB[T]] ? ([DB[T]] extends [R] ? T : never) : never }[KeyedTable];

/**
 * `q` (over `table` as `alias`) from just after the cursor row, newest first, `p.limit` rows. The cursor row is looked
 * up in the caller's organization, so a foreign id ends the list instead of revealing where it sorts. The types hold
 * `alias` to one of the query's tables and `table` to the table that alias reads, which has the three columns named
 * here; so these references, written once for every record type, are as checked as the builder's own.
 */
export function newestFirst<QDB, TB extends keyof QDB, O, A extends TB & string>(
  q: SelectQueryBuilder<QDB, TB, O>,
  table: TableOf<QDB[A]>,
  alias: A,
  p: PageParams,
): SelectQueryBuilder<QDB, TB, O> {
  const ref = (column: 'created_at' | 'id') => sql.ref(`${alias}.${column}`);
  // One row comparison with the cursor row's keys (or "after everything" without a cursor; an unknown cursor leaves
  // nulls, which match nothing): an index condition a generic plan can start its walk at. The former `cursor is null
  // or ...` could not be one, so a page deep into a large organization filtered every newer row first.
  const key = (column: 'created_at' | 'id', none: string) =>
    sql`coalesce((select k.${sql.ref(column)} from ${sql.table(table)} k where k.id = ${p.cursor} and k.organization_id = ${p.orgId}), case when ${p.cursor}::uuid is null then ${sql.raw(none)} end)`;
  const after: Expression<SqlBool> = sql<boolean>`((${ref('created_at')}, ${ref('id')}) < (${key('created_at', "'infinity'::timestamptz")}, ${key('id', "'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid")}))`;
  return q
    .where(() => after)
    .orderBy(ref('created_at'), 'desc')
    .orderBy(ref('id'), 'desc')
    .limit(p.limit);
}

/** Whether an id is a row of `table` in the organization: one statement per list, built once, like every statement. */
const rowIn = (table: KeyedTable) =>
  statement<{ id: string; orgId: string }>()((p) =>
    // Every keyed table has an id and an organization (KeyedTable says so); the builder is typed on one of them.
    qb
      .selectFrom(table as 'deals')
      .select('id')
      .where('id', '=', p.id)
      .where('organization_id', '=', p.orgId),
  );
/** The same, within the parent a list is scoped to (a workflow's runs, a form's submissions, an endpoint's attempts). */
const rowUnder = (table: KeyedTable, column: 'workflow_id' | 'form_id' | 'endpoint_id') =>
  statement<{ id: string; orgId: string; scope: string }>()((p) =>
    qb
      .selectFrom(table as 'deals')
      .select('id')
      .where('id', '=', p.id)
      .where('organization_id', '=', p.orgId)
      .where(sql<boolean>`${sql.ref(column)} = ${p.scope}::uuid`),
  );

const LISTS = {
  companies: rowIn('companies'),
  deals: rowIn('deals'),
  tasks: rowIn('tasks'),
  bookings: rowIn('bookings'),
  ai_actions: rowIn('ai_actions'),
  forms: rowIn('forms'),
  workflows: rowIn('workflows'),
  webhook_endpoints: rowIn('webhook_endpoints'),
};
const SCOPED_LISTS = {
  workflow_runs: rowUnder('workflow_runs', 'workflow_id'),
  form_submissions: rowUnder('form_submissions', 'form_id'),
  webhook_attempts: rowUnder('webhook_attempts', 'endpoint_id'),
};
/** The id-keyed lists, by the table they page. */
export type IdList = keyof typeof LISTS;
export type ScopedIdList = keyof typeof SCOPED_LISTS;

/**
 * An empty page after a cursor is the end of the list, or a cursor this list never returned: an id of another list, of
 * another organization or parent, or made up, which the page's SQL reads as "nothing after it". The shape was checked
 * by the schema (a UUID); one look-up, made only for an empty page, tells the two apart, and a cursor whose row is not
 * this list's is refused (400 invalid_cursor) instead of ending the list.
 */
export async function refuseForeignCursor(
  db: Db,
  list: IdList | { list: ScopedIdList; scope: string },
  page: { orgId: string; cursor: string | null | undefined },
  rows: readonly unknown[],
): Promise<void> {
  if (page.cursor == null || rows.length > 0) return;
  const params = { id: page.cursor, orgId: page.orgId };
  const found =
    typeof list === 'string' ? await db.run(LISTS[list], params) : await db.run(SCOPED_LISTS[list.list], { ...params, scope: list.scope });
  if (found.length === 0) throw new AppError('invalid_cursor', 'cursor is not one this list returned; start again without a cursor');
}
