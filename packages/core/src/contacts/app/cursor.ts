import { type DB, type Expression, expressionBuilder, sql, type SqlBool } from '@leadwire/db';

/**
 * Keyset pagination: a page ends at the sort key of its last row, and the next page starts strictly after it. The
 * cursor carries that key (every column of it, the id tiebreak included), so rows inserted or deleted between pages
 * neither repeat nor vanish, and no page costs more than its own rows.
 */

export type KeyType = 'timestamptz' | 'int' | 'text' | 'boolean' | 'uuid';
export type Direction = 'asc' | 'desc';

export interface SortKey {
  /** An expression over the `c` (contacts) alias. */
  expr: Expression<unknown>;
  type: KeyType;
  dir: Direction;
}

export type ListSort = 'createdAt' | 'updatedAt' | 'lastName' | 'leadScore' | 'deletedAt';

const c = expressionBuilder<DB & { c: DB['contacts'] }, 'c'>();

export function sortKeys(sort: ListSort, dir: Direction): SortKey[] {
  const id: SortKey = { expr: c.ref('c.id'), type: 'uuid', dir };
  switch (sort) {
    case 'createdAt':
      return [{ expr: c.ref('c.created_at'), type: 'timestamptz', dir }, id];
    case 'updatedAt':
      return [{ expr: c.ref('c.updated_at'), type: 'timestamptz', dir }, id];
    case 'deletedAt':
      return [{ expr: c.ref('c.deleted_at'), type: 'timestamptz', dir }, id];
    case 'leadScore':
      return [{ expr: c.ref('c.lead_score'), type: 'int', dir }, id];
    case 'lastName':
      // Contacts without a last name come last in both directions; names compare case-insensitively, then first names.
      return [
        { expr: sql<boolean>`(${c.ref('c.last_name')} is null)`, type: 'boolean', dir: 'asc' },
        { expr: sql<string>`coalesce(lower(${c.ref('c.last_name')}), '')`, type: 'text', dir },
        { expr: sql<string>`coalesce(lower(${c.ref('c.first_name')}), '')`, type: 'text', dir },
        id,
      ];
  }
}

/** Each key as text, exactly (selected as `k0`, `k1`, ...): timestamps keep their microseconds, which a JS Date would drop. */
export function keyColumns(keys: readonly SortKey[]) {
  return keys.map((k, i) =>
    (k.type === 'timestamptz'
      ? sql<string>`to_char(${k.expr} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
      : sql<string>`${k.expr}::text`
    ).as(`k${i}`),
  );
}

/**
 * "Strictly after `values` in this order", as `(k1 > v1) or (k1 = v1 and ((k2 > v2) or ...))`: unlike a row comparison
 * it allows keys sorted in different directions. Each value is a parameter cast to its key's type.
 */
export function keysetPredicate(keys: readonly SortKey[], values: readonly string[]): Expression<SqlBool> {
  const build = (i: number): Expression<SqlBool> => {
    const k = keys[i]!;
    // The type and the operator come from the closed sets above, never from the cursor.
    const v = () => sql`${values[i]!}::${sql.raw(k.type)}`;
    const strict = sql<SqlBool>`${k.expr} ${sql.raw(k.dir === 'asc' ? '>' : '<')} ${v()}`;
    if (i === keys.length - 1) return strict;
    return sql<SqlBool>`(${strict} or (${k.expr} = ${v()} and ${build(i + 1)}))`;
  };
  return build(0);
}

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A cursor is client input: every value must be one Postgres accepts for its type, or the query would fail as a 500. */
function validValue(type: KeyType, v: unknown): v is string {
  if (typeof v !== 'string') return false;
  switch (type) {
    case 'timestamptz': {
      if (!TS.test(v)) return false;
      const d = new Date(`${v.slice(0, 23)}Z`);
      // Year 0 passes the shape and JavaScript but not PostgreSQL ("date/time field value out of range").
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 23) === v.slice(0, 23) && d.getUTCFullYear() >= 1;
    }
    case 'int':
      return /^-?\d{1,10}$/.test(v) && Math.abs(Number(v)) <= 2_147_483_647;
    case 'boolean':
      return v === 'true' || v === 'false';
    case 'uuid':
      return UUID.test(v);
    case 'text':
      return v.length <= 1000 && !v.includes('\u0000');
  }
}

/** The lists these cursors page: each takes back only its own (a list cursor of the same sort is no timeline cursor). */
export type CursorList = 'contacts' | 'trash' | 'timeline';

/** 1 named no list; its cursors are refused like any foreign one. */
const VERSION = 2;

export function encodeCursor(list: CursorList, sort: ListSort, dir: Direction, values: readonly string[]): string {
  return Buffer.from(JSON.stringify([VERSION, list, sort, dir, values])).toString('base64url');
}

/**
 * The key values of a cursor `list` made for this sort and direction, or null when it is anything else: checked whole
 * (shape, each value one PostgreSQL takes for its key's type, one spelling) before any of it reaches SQL.
 */
export function decodeCursor(
  cursor: string,
  list: CursorList,
  sort: ListSort,
  dir: Direction,
  keys: readonly Pick<SortKey, 'type'>[],
): string[] | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 5) return null;
  const [version, l, s, d, values] = parsed as unknown[];
  if (version !== VERSION || l !== list || s !== sort || d !== dir || !Array.isArray(values) || values.length !== keys.length) return null;
  if (!values.every((v, i) => validValue(keys[i]!.type, v))) return null;
  // The same values spelt otherwise (spaces, escapes, padding bits) are not a cursor this API returned.
  return encodeCursor(list, sort, dir, values) === cursor ? values : null;
}
