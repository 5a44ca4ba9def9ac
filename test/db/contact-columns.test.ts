import { CONTACT_TABLE, type ContactRecord } from '#core/contacts/shared/columns.ts';
import { migrateUp, type MikroORM, openOrm } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * The contact's columns are listed once in the code (contacts/shared/columns.ts) and once in the schema (the entity
 * and its migrations). After migrating a fresh database, the two must name the same columns with the same types and
 * nullability, so a migration that adds, drops or retypes a column fails here until the list follows.
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

const listed = (): Described =>
  Object.fromEntries(
    Object.entries(CONTACT_TABLE)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, c]) => [name, { type: c.type, nullable: c.nullable }]),
  );

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

  it('matches the migrated contacts table: names, types and nullability', async () => {
    expect(listed()).toEqual(await described(orm, 'contacts'));
  });

  it('would be caught: a column a migration adds, or a changed nullability, shows as a difference', async () => {
    const conn = orm.em.getConnection();
    await conn.execute('alter table contacts add column nickname text null');
    await conn.execute('alter table contacts alter column stage drop not null');
    try {
      const actual = await described(orm, 'contacts');
      expect(actual.nickname).toEqual({ type: 'text', nullable: true });
      expect(listed()).not.toEqual(actual);
      expect(actual.stage).not.toEqual(listed().stage);
    } finally {
      await conn.execute('alter table contacts drop column nickname');
      await conn.execute('alter table contacts alter column stage set not null');
    }
    expect(listed()).toEqual(await described(orm, 'contacts'));
  });

  it('types rows the way pg returns them', () => {
    expectTypeOf<ContactRecord['email']>().toEqualTypeOf<string | null>();
    expectTypeOf<ContactRecord['tags']>().toEqualTypeOf<string[]>();
    expectTypeOf<ContactRecord['score_override']>().toEqualTypeOf<number | null>();
    expectTypeOf<ContactRecord['deleted_at']>().toEqualTypeOf<Date | string | null>();
    expectTypeOf<ContactRecord['email_consent']>().toEqualTypeOf<boolean>();
  });
});
