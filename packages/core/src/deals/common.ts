import type { Db } from '@leadwire/db';
import { z } from 'zod';
import { contactColumns } from '../contacts/shared/columns.ts';
import type { ContactRow } from '../contacts/shared/row.ts';
import { AppError, errors } from '../errors.ts';

/*
 * Helpers shared by the CRM record modules (deals, tasks, bookings, AI actions). They live here until the project has
 * a shared module for record plumbing.
 */

export const iso = (d: Date | string): string => new Date(d).toISOString();
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));

export { IsoDateTime } from '../validation/index.ts';

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

/** The keyset condition for table alias `alias`; binds (cursor, cursor, orgId). */
export const afterCursor = (alias: string, table: string) =>
  `(?::uuid is null or (${alias}.created_at, ${alias}.id) < (select k.created_at, k.id from ${table} k where k.id = ? and k.organization_id = ?))`;

const LIVE_CONTACT = `select ${contactColumns()} from contacts where id = ? and organization_id = ? and deleted_at is null`;

/**
 * The live (not trashed) contact `id` of the organization, or 404: a foreign or trashed id looks unknown. `lock` takes a
 * row lock so the contact cannot be trashed or rescored underneath the caller's transaction.
 */
export async function requireLiveContact(db: Db, orgId: string, id: string, lock?: 'share' | 'update'): Promise<ContactRow> {
  const suffix = lock === 'update' ? ' for update' : lock === 'share' ? ' for share' : '';
  const [row] = await db.execute<ContactRow[]>(LIVE_CONTACT + suffix, [id, orgId]);
  if (!row) throw errors.notFound(`No contact with id ${id}`);
  return row;
}

export const conflict = (code: string, message: string, details: Record<string, unknown> = {}) =>
  new AppError(409, code, message, details);

/** Mutations of the internal surface: the errors any of them can answer with, for the contract. */
export const INTERNAL_ERRORS = ['unauthorized', 'wrong_api_surface', 'rate_limited', 'validation_failed'] as const;
