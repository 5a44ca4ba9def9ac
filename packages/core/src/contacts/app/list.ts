import { type DB, type Db, type Expression, expressionBuilder, qb, sql, type SqlBool } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { contactColumnsOf } from '../shared/columns.ts';
import { contactErrors } from './errors.ts';
import { type Direction, decodeCursor, encodeCursor, keyColumns, keysetPredicate, type ListSort, sortKeys } from './cursor.ts';
import { iso } from '../../records/dates.ts';
import { daysLeft, purgeAfter, toAppContact, trashCutoff } from './row.ts';
import type { AppContact, ContactListInput } from './schemas.ts';

/** `%` and `_` in a search are literal characters, not wildcards. */
const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

/** Filters see the contact (`c`) and its company (`co`). */
const listed = expressionBuilder<DB & { c: DB['contacts']; co: DB['companies'] }, 'c' | 'co'>();

interface PageQuery {
  orgId: string;
  trashed: boolean;
  filters: Expression<SqlBool>[];
  sort: ListSort;
  dir: Direction;
  limit: number;
  cursor: string | undefined;
}

/** Built per call: the filters, the sort and the cursor shape it. */
async function page(db: Db, p: PageQuery) {
  const keys = sortKeys(p.sort, p.dir);
  let q = qb
    .selectFrom('contacts as c')
    .leftJoin('companies as co', 'co.id', 'c.company_id')
    .select([...contactColumnsOf('c'), 'co.name as company_name', 'co.domain as company_domain', ...keyColumns(keys)])
    .where('c.organization_id', '=', p.orgId)
    .where('c.deleted_at', p.trashed ? 'is not' : 'is', null);
  for (const f of p.filters) q = q.where(f);
  if (p.cursor !== undefined) {
    const values = decodeCursor(p.cursor, p.trashed ? 'trash' : 'contacts', p.sort, p.dir, keys);
    if (!values) throw contactErrors.invalidCursor();
    q = q.where(keysetPredicate(keys, values));
  }
  for (const k of keys) q = q.orderBy(k.expr, k.dir);
  // One row beyond the page tells whether there is a next page without counting.
  const rows = await db.query(q.limit(p.limit + 1));
  const more = rows.length > p.limit;
  const items = rows.slice(0, p.limit);
  const last = items.at(-1);
  return {
    rows: items,
    nextCursor:
      more && last
        ? encodeCursor(
            p.trashed ? 'trash' : 'contacts',
            p.sort,
            p.dir,
            keys.map((_, i) => String(last[`k${i}`])),
          )
        : null,
  };
}

/** The live contacts of the organization, filtered and sorted, one page at a time. Trashed contacts never appear. */
export async function listContacts(
  db: Db,
  actor: InternalActor,
  input: ContactListInput,
): Promise<{ items: AppContact[]; nextCursor: string | null }> {
  const filters: PageQuery['filters'] = [];
  if (input.stage) filters.push(listed('c.stage', '=', input.stage));
  if (input.source) filters.push(listed('c.source', '=', input.source));
  // Stored lowercased and trimmed, as the schema leaves the filter: an equality the live-email unique index serves.
  if (input.email) filters.push(listed('c.email', '=', input.email));
  if (input.tag) filters.push(sql<SqlBool>`exists (select 1 from unnest(${listed.ref('c.tags')}) t where lower(t) = lower(${input.tag}))`);
  if (input.q) {
    const like = likePattern(input.q);
    const fields = [
      listed.ref('c.first_name'),
      listed.ref('c.last_name'),
      sql`concat_ws(' ', ${listed.ref('c.first_name')}, ${listed.ref('c.last_name')})`,
      listed.ref('c.email'),
      listed.ref('co.name'),
      listed.ref('co.domain'),
    ];
    filters.push(listed.or(fields.map((f) => sql<SqlBool>`${f} ilike ${like} escape '\\'`)));
  }
  const { rows, nextCursor } = await page(db, {
    orgId: actor.orgId,
    trashed: false,
    filters,
    sort: input.sort,
    dir: input.order,
    limit: input.limit,
    cursor: input.cursor,
  });
  return { items: rows.map(toAppContact), nextCursor };
}

/** Trashed contacts, most recently deleted first, with when each one leaves trash for good. */
export async function listTrash(db: Db, actor: InternalActor, input: { limit: number; cursor?: string | undefined }, now: Date) {
  const { rows, nextCursor } = await page(db, {
    orgId: actor.orgId,
    trashed: true,
    filters: [],
    sort: 'deletedAt',
    dir: 'desc',
    limit: input.limit,
    cursor: input.cursor,
  });
  const cutoff = trashCutoff(now);
  return {
    items: rows.map((r) => ({
      ...toAppContact(r),
      deletedAt: iso(r.deleted_at!),
      purgeAfter: purgeAfter(r.deleted_at!).toISOString(),
      restorable: new Date(r.deleted_at!) >= cutoff,
      daysLeft: daysLeft(r.deleted_at!, now),
    })),
    nextCursor,
  };
}
