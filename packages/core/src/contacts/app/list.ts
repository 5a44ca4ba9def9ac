import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { CONTACT_COLUMNS } from '../shared/columns.ts';
import { contactErrors } from './errors.ts';
import { type Direction, decodeCursor, encodeCursor, keyColumns, keysetPredicate, type ListSort, orderBy, sortKeys } from './cursor.ts';
import { type AppContactRow, iso, purgeAfter, toAppContact, trashCutoff } from './row.ts';
import type { AppContact, ContactListInput } from './schemas.ts';

type KeyedRow = AppContactRow & Record<`k${number}`, string>;

/** `%` and `_` in a search are literal characters, not wildcards. */
const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

interface PageQuery {
  orgId: string;
  trashed: boolean;
  filters: { sql: string; params: unknown[] }[];
  sort: ListSort;
  dir: Direction;
  limit: number;
  cursor: string | undefined;
}

async function page(db: Db, p: PageQuery): Promise<{ rows: AppContactRow[]; nextCursor: string | null }> {
  const keys = sortKeys(p.sort, p.dir);
  const where = [
    { sql: 'c.organization_id = ?', params: [p.orgId] },
    { sql: p.trashed ? 'c.deleted_at is not null' : 'c.deleted_at is null', params: [] },
    ...p.filters,
  ];
  if (p.cursor !== undefined) {
    const values = decodeCursor(p.cursor, p.sort, p.dir, keys);
    if (!values) throw contactErrors.invalidCursor();
    where.push(keysetPredicate(keys, values));
  }
  // One row beyond the page tells whether there is a next page without counting.
  const rows = await db.execute<KeyedRow[]>(
    `select ${CONTACT_COLUMNS}, co.name as company_name, co.domain as company_domain, ${keyColumns(keys)}
     from contacts c left join companies co on co.id = c.company_id
     where ${where.map((w) => w.sql).join(' and ')}
     order by ${orderBy(keys)}
     limit ?`,
    [...where.flatMap((w) => w.params), p.limit + 1],
  );
  const more = rows.length > p.limit;
  const items = rows.slice(0, p.limit);
  const last = items.at(-1);
  return {
    rows: items,
    nextCursor: more && last ? encodeCursor(p.sort, p.dir, keys.map((_, i) => String(last[`k${i}`]))) : null,
  };
}

/** The live contacts of the organization, filtered and sorted, one page at a time. Trashed contacts never appear. */
export async function listContacts(
  db: Db,
  actor: InternalActor,
  input: ContactListInput,
): Promise<{ items: AppContact[]; nextCursor: string | null }> {
  const filters: PageQuery['filters'] = [];
  if (input.stage) filters.push({ sql: 'c.stage = ?', params: [input.stage] });
  if (input.source) filters.push({ sql: 'c.source = ?', params: [input.source] });
  if (input.tag) filters.push({ sql: 'exists (select 1 from unnest(c.tags) t where lower(t) = lower(?))', params: [input.tag] });
  if (input.q) {
    const like = likePattern(input.q);
    const fields = [
      'c.first_name',
      'c.last_name',
      `concat_ws(' ', c.first_name, c.last_name)`,
      'c.email',
      'co.name',
      'co.domain',
    ];
    filters.push({ sql: `(${fields.map((f) => `${f} ilike ? escape '\\'`).join(' or ')})`, params: fields.map(() => like) });
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
    })),
    nextCursor,
  };
}
