import { defineEntity, p } from '@mikro-orm/core';
import { allEntities, migrateUp, type MikroORM, openOrm } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * The committed migrations are the schema; the entities are what the code believes the schema is. After migrating a
 * fresh database, MikroORM's own diff (the SQL that `migration:create` would write) must be empty, or an entity
 * changed without a migration (or a migration was edited without its entity).
 */

// A table no migration creates, to show the diff below is not empty by construction.
const CanarySchema = defineEntity({
  name: 'SchemaCanary',
  tableName: 'schema_canary',
  properties: { id: p.integer().primary(), label: p.text() },
});

async function diff(orm: MikroORM): Promise<string> {
  return (await orm.schema.getUpdateSchemaSQL({ wrap: false })).trim();
}

describe('entities and committed migrations', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  beforeAll(async () => {
    db = await createTestDatabase('schema');
    orm = await openOrm(db.url, { pool: { min: 0, max: 2 } });
    expect(await migrateUp(orm)).not.toEqual([]);
  });
  afterAll(async () => {
    await orm?.close(true);
    await db?.drop();
  });

  it('agree: the migrated database needs no further change', async () => {
    expect(await diff(orm)).toBe('');
  });

  it('would be caught: an entity without a migration shows up in the diff', async () => {
    const withCanary = await openOrm(db.url, { pool: { min: 0, max: 1 }, entities: [...allEntities, CanarySchema] });
    try {
      expect(await diff(withCanary)).toMatch(/create table "schema_canary"/);
    } finally {
      await withCanary.close(true);
    }
  });

  it('would be caught: a column the entities expect but the database lacks shows up in the diff', async () => {
    await orm.em.fork().execute('alter table "contacts" drop column "website"');
    try {
      expect(await diff(orm)).toMatch(/alter table "contacts" add "website" text null/);
    } finally {
      await orm.em.fork().execute('alter table "contacts" add column "website" text null');
    }
    expect(await diff(orm)).toBe('');
  });
});
