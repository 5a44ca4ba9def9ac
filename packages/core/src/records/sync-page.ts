import { type Expression, sql, type SqlBool } from '@leadwire/db';
import { z } from 'zod';
import { AppError } from '../errors.ts';

/**
 * The /v1 lists a partner syncs from: records in (updated_at, id) order, oldest change first. A record changed while
 * the partner pages moves past the cursor and appears again on a later page, so walking to the end never misses a
 * change made before the walk ended. The cursor is the (updated_at, id) of the last item, to the microsecond.
 */

export const SYNC_PAGE_DEFAULT = 25;
export const SYNC_PAGE_MAX = 100;

/** Microseconds: what the column holds; a JS Date would drop three digits and repeat or skip rows at a page edge. */
const POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** No id is the nil UUID, so (t, nil) sorts before every record changed at t: "from t, inclusive". */
const NIL = '00000000-0000-0000-0000-000000000000';
/** s1 cursors named no list, so one list took another's: they are refused (`invalid_cursor`), as any foreign cursor. */
const VERSION = 's2';

/**
 * Read to the microsecond, as the column holds it (a JS Date alone would round `.000001` down to `.000` and include a
 * record changed a microsecond earlier). Years of four digits only: Postgres and JS agree on those.
 */
const UpdatedSince = z.iso
  .datetime({ offset: true })
  .transform((s, ctx) => {
    const d = new Date(s);
    if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1 || d.getUTCFullYear() > 9999) {
      ctx.addIssue({ code: 'custom', message: 'updatedSince must be a real instant between years 0001 and 9999' });
      return z.NEVER;
    }
    // Offsets are whole minutes, so the fraction's digits are the UTC instant's; beyond microseconds they are cut.
    const micro = (/\.(\d+)/.exec(s)?.[1] ?? '').padEnd(6, '0').slice(3, 6);
    return `${d.toISOString().slice(0, 23)}${micro}Z`;
  })
  .meta({
    description:
      'Only records changed at or after this instant (inclusive), ISO 8601 with `Z` or an offset: e.g. the `updatedAt` of the last record a previous sync saw.',
    example: '2026-11-20T00:00:00Z',
  });

export const SyncPageFields = {
  limit: z
    .number()
    .int()
    .min(1)
    .max(SYNC_PAGE_MAX, `limit must be at most ${SYNC_PAGE_MAX}`)
    .default(SYNC_PAGE_DEFAULT)
    .meta({ description: `Page size, 1-${SYNC_PAGE_MAX} (default ${SYNC_PAGE_DEFAULT}).` }),
  cursor: z.string().max(200).optional().meta({ description: '`nextCursor` of the previous page. Keep the same `updatedSince`.' }),
  updatedSince: UpdatedSince.optional(),
};

export interface SyncPageInput {
  limit: number;
  cursor?: string | undefined;
  /** UTC to the microsecond, as a cursor position (the schema's output). */
  updatedSince?: string | undefined;
}

export const syncPageOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item).meta({ description: 'Oldest change first, by `updatedAt` then `id`.' }),
    nextCursor: z.string().nullable().meta({
      description:
        'Pass as `cursor` for the next page; null when this page reached the end. Records changed after that show up again on a new walk with `updatedSince`.',
    }),
  });

/** The lists a sync cursor can belong to: a cursor says which one made it, and no other list takes it. */
export type SyncList = 'contacts' | 'companies';

export const encodeSyncCursor = (list: SyncList, position: string, id: string) =>
  Buffer.from(JSON.stringify([VERSION, list, position, id])).toString('base64url');

/**
 * The (position, id) of a cursor `list` returned, or null for anything else: checked whole before it reaches SQL (the
 * shape, a real instant PostgreSQL takes, the list that made it, and one spelling only), so no cursor can fail a query.
 */
export function decodeSyncCursor(cursor: string, list: SyncList): { position: string; id: string } | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) return null;
  const [v, from, position, id] = parsed as unknown[];
  if (v !== VERSION || from !== list || typeof position !== 'string' || typeof id !== 'string') return null;
  if (!POSITION.test(position) || !UUID.test(id)) return null;
  // The shape alone lets through February 30th, and year 0, which PostgreSQL refuses ("date/time field value out of
  // range"): the instant must be a real one between years 0001 and 9999, as updatedSince is.
  const d = new Date(`${position.slice(0, 23)}Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 23) !== position.slice(0, 23) || d.getUTCFullYear() < 1) return null;
  // One cursor, one spelling: the same values re-encoded otherwise (spaces, escapes, padding bits) are not ours.
  return encodeSyncCursor(list, position, id) === cursor ? { position, id } : null;
}

/** Where a page starts: just after the cursor, or at `updatedSince`, whichever is later (both are inclusive bounds). */
export function startOf(input: SyncPageInput, list: SyncList): { afterTs: string; afterId: string } {
  const since = input.updatedSince ? { afterTs: input.updatedSince, afterId: NIL } : null;
  if (input.cursor === undefined) return since ?? { afterTs: '-infinity', afterId: NIL };
  const c = decodeSyncCursor(input.cursor, list);
  if (!c) throw new AppError('invalid_cursor', 'cursor is not one this list returned; start again without a cursor');
  const after = { afterTs: c.position, afterId: c.id };
  // Same fixed-width format on both sides: text order is time order.
  return since && since.afterTs > after.afterTs ? since : after;
}

/** The row's updated_at as the cursor holds it, in UTC to the microsecond. */
export const positionOf = (updatedAt: Expression<Date>) =>
  sql<string>`to_char(${updatedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * "(updated_at, id) after the start": one row comparison, which the (organization_id, updated_at, id) indexes take
 * as their index condition, so a page reads its own rows whatever the organization's size.
 */
export const afterStart = (updatedAt: Expression<Date>, id: Expression<string>, afterTs: unknown, afterId: unknown) =>
  sql<SqlBool>`(${updatedAt}, ${id}) > (${afterTs}::timestamptz, ${afterId}::uuid)`;

/** Rows fetched with `limit + 1`: the extra one only says whether there is a next page. */
export function toSyncPage<R extends { id: string; position: string }, V>(
  list: SyncList,
  rows: readonly R[],
  limit: number,
  view: (r: R) => V,
) {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items: items.map(view), nextCursor: rows.length > limit && last ? encodeSyncCursor(list, last.position, last.id) : null };
}
