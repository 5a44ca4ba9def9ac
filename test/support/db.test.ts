import { migrateUp, openOrm } from '@leadwire/db';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from './db.ts';
import type { TestDatabase } from './db.ts';

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const tableExists = (url: string, table: string) =>
  withClient(url, async (c) => (await c.query<{ t: string | null }>(`select to_regclass($1)::text as t`, [table])).rows[0]?.t ?? null);

const databaseExists = (name: string) =>
  withClient(inject('pgAdminUrl'), async (c) => (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount);

describe('createTestDatabase', () => {
  const created: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(created.map((db) => db.drop()));
  });

  it('gives each caller its own database, named after the run and the label', async () => {
    const a = await createTestDatabase('Isolation A');
    const b = await createTestDatabase();
    created.push(a, b);
    expect(a.url).not.toBe(b.url);
    expect(new URL(a.url).pathname).toBe(`/${a.name}`);
    expect(a.name).toMatch(new RegExp(`^${inject('pgRunPrefix')}isolation_a_[0-9a-f]{12}$`));

    await withClient(a.url, (c) => c.query('create table only_in_a (id int)'));
    expect(await tableExists(a.url, 'only_in_a')).toBe('only_in_a');
    expect(await tableExists(b.url, 'only_in_a')).toBeNull();
  });

  it('clones the migrated template on request, leaving nothing for the migrator; otherwise the database is empty', async () => {
    const migrated = await createTestDatabase('migrated', { migrated: true });
    const empty = await createTestDatabase('empty');
    created.push(migrated, empty);
    expect(await tableExists(migrated.url, 'contacts')).toBe('contacts');
    expect(await tableExists(empty.url, 'contacts')).toBeNull();

    const orm = await openOrm(migrated.url, { pool: { min: 0, max: 1 } });
    try {
      expect(await migrateUp(orm)).toEqual([]);
    } finally {
      await orm.close(true);
    }
    // Clones are independent of each other and of the template.
    await withClient(migrated.url, (c) => c.query('drop table contacts cascade'));
    const again = await createTestDatabase('again', { migrated: true });
    created.push(again);
    expect(await tableExists(again.url, 'contacts')).toBe('contacts');
  });

  describe('drop', () => {
    let name = '';
    let open: pg.Client;

    it('inside a passing test, waits for the test to end, then drops even with a connection open; twice is fine', async () => {
      const db = await createTestDatabase();
      name = db.name;
      open = new pg.Client({ connectionString: db.url });
      // The forced drop terminates this session; pg reports that as an error event.
      open.on('error', () => {});
      await open.connect();
      await db.drop();
      await db.drop();
      // The test's outcome is not known yet, so the database is still there.
      expect(await databaseExists(name)).toBe(1);
    });

    it('(the database of the test above is gone)', async () => {
      expect(await databaseExists(name)).toBe(0);
      await open.end().catch(() => {});
    });
  });

  let hookDb: TestDatabase;
  describe('drop in an afterAll hook', () => {
    afterAll(async () => hookDb.drop());
    it('(creates a database)', async () => {
      hookDb = await createTestDatabase();
      expect(await databaseExists(hookDb.name)).toBe(1);
    });
  });

  it('drops at once when nothing in the file has failed', async () => {
    expect(await databaseExists(hookDb.name)).toBe(0);
  });
});
