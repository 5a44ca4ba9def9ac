/**
 * Type checks of the statements, compiled by `tsc -p tsconfig.json` (and so by `npm test`'s type check), never run.
 * Every `@ts-expect-error` below must meet an error on its next line, or tsc fails on the unused directive: a misspelt
 * table or column, a row read as the wrong type, or a parameter of the wrong type keeps failing the build.
 */
import type { Selectable } from 'kysely';
import { qb, statement, type DB } from './statements.ts';

// @ts-expect-error: contacts has no column `emial`
export const misspeltSelect = qb.selectFrom('contacts').select('emial');

// @ts-expect-error: nor can a condition name one
export const misspeltWhere = qb.selectFrom('contacts').select('email').where('emial', '=', 'ada@example.com');

// @ts-expect-error: the table is `contacts`
export const misspeltTable = qb.selectFrom('contact').select('id');

export const misspeltInsert = qb
  .insertInto('webhook_endpoints')
  // @ts-expect-error: webhook_endpoints has no column `urll`
  .values({ organization_id: 'o', url: 'https://example.com', secret: 's', urll: 'x' });

export const missingRequired = qb
  .insertInto('webhook_endpoints')
  // @ts-expect-error: `url` is not null and has no default
  .values({ organization_id: 'o', secret: 's' });

export const misspeltReturning = qb
  .updateTable('users')
  .set({ name: 'Ada' })
  // @ts-expect-error: users has no column `credentials_epoch`
  .returning(['id', 'credentials_epoch']);

export const wrongParameter = statement<{ orgId: number }>()((p) =>
  qb
    .selectFrom('contacts')
    .select('id')
    // @ts-expect-error: organization_id is a uuid (a string), not a number
    .where('organization_id', '=', p.orgId),
);

export const FIND = statement<{ orgId: string; email: string }>()((p) =>
  qb
    .selectFrom('contacts')
    .select(['id', 'email', 'tags', 'score_override'])
    .where('organization_id', '=', p.orgId)
    .where('email', '=', p.email),
);

/** A row as the statement types it, read into variables of the right and of wrong types. */
export function rowTypes(row: NonNullable<(typeof FIND)['row']>) {
  const id: string = row.id;
  const tags: string[] = row.tags;
  // @ts-expect-error: email is nullable
  const email: string = row.email;
  // @ts-expect-error: tags are text[], not a number
  const count: number = row.tags;
  // @ts-expect-error: a column the statement did not select
  const name: unknown = row.first_name;
  // @ts-expect-error: score_override is an integer (or null), not text
  const score: string | null = row.score_override;
  return { id, tags, email, count, name, score };
}

// @ts-expect-error: a role the entity does not declare
export const role: Selectable<DB['users']>['role'] = 'superuser';
