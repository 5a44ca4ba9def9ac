import { CONTACT_COLUMN_NAMES, type ContactRecord } from '#core/contacts/shared/columns.ts';
import { migrateUp, type MikroORM, openOrm } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * The contact's column types come from the entity; its column names are listed once more in the code
 * (contacts/shared/columns.ts) for the select, insert and update lists, and the compiler holds that list to the entity.
 * After migrating a fresh database, the list must also name the columns the table has, so a migration that adds or
 * drops a column fails here until the list (and the entity) follows.
 */

type Described = Record<string, { type: string; nullable: boolean }>;

async function described(orm: MikroORM, table: string): Promise<Described> {
  const rows = await orm.em.getConnection().execute<{ name: string; type: string; nullable: boolean }[]>(
    `select column_name as name, is_nullable = 'YES' as nullable,
       case when data_type = 'ARRAY' then substr(udt_name, 2) || '[]' else data_type end as type
     from information_schema.columns where table_schema = current_schema() and table_name = ? order by column_name`,
    [table],
  );
  return Object.fromEntries(rows.map((r) => [r.name, { type: r.type, nullable: r.nullable }]));
}

const listed = () => [...CONTACT_COLUMN_NAMES].sort();
const names = (d: Described) => Object.keys(d).sort();

describe('the contact column list', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  beforeAll(async () => {
    db = await createTestDatabase('contact_columns');
    orm = await openOrm(db.url, { pool: { min: 0, max: 1 } });
    await migrateUp(orm);
  });
  afterAll(async () => {
    await orm?.close(true);
    await db?.drop();
  });

  it('names every column of the migrated contacts table', async () => {
    expect(listed()).toEqual(names(await described(orm, 'contacts')));
  });

  it('would be caught: a column a migration adds shows as a difference', async () => {
    const conn = orm.em.getConnection();
    await conn.execute('alter table contacts add column nickname text null');
    try {
      const actual = await described(orm, 'contacts');
      expect(actual.nickname).toEqual({ type: 'text', nullable: true });
      expect(listed()).not.toEqual(names(actual));
    } finally {
      await conn.execute('alter table contacts drop column nickname');
    }
    expect(listed()).toEqual(names(await described(orm, 'contacts')));
  });

  it('is held to the entity by the compiler: the list names exactly the columns of the entity', () => {
    expectTypeOf<(typeof CONTACT_COLUMN_NAMES)[number]>().toEqualTypeOf<keyof ContactRecord>();
  });

  it('types rows the way pg returns them', () => {
    expectTypeOf<ContactRecord['email']>().toEqualTypeOf<string | null>();
    expectTypeOf<ContactRecord['tags']>().toEqualTypeOf<string[]>();
    expectTypeOf<ContactRecord['score_override']>().toEqualTypeOf<number | null>();
    expectTypeOf<ContactRecord['deleted_at']>().toEqualTypeOf<Date | null>();
    expectTypeOf<ContactRecord['email_consent']>().toEqualTypeOf<boolean>();
  });
});
