import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
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

describe('createTestDatabase', () => {
  const created: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(created.map((db) => db.drop()));
  });

  it('gives each caller its own database', async () => {
    const a = await createTestDatabase('Isolation A');
    const b = await createTestDatabase();
    created.push(a, b);
    expect(a.url).not.toBe(b.url);
    expect(new URL(a.url).pathname).toMatch(/^\/t_isolation_a_[0-9a-f]{12}$/);

    await withClient(a.url, (c) => c.query('create table only_in_a (id int)'));
    const visible = (url: string) =>
      withClient(url, async (c) => (await c.query<{ t: string | null }>(`select to_regclass('only_in_a')::text as t`)).rows[0]?.t);
    expect(await visible(a.url)).toBe('only_in_a');
    expect(await visible(b.url)).toBeNull();
  });

  it('drops the database even with a connection still open, and twice', async () => {
    const db = await createTestDatabase();
    const name = new URL(db.url).pathname.slice(1);
    const open = new pg.Client({ connectionString: db.url });
    // The forced drop terminates this session; pg reports that as an error event.
    open.on('error', () => {});
    await open.connect();

    await db.drop();
    await db.drop();
    const other = await createTestDatabase();
    created.push(other);
    const left = await withClient(other.url, async (c) => (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount);
    expect(left).toBe(0);
    await open.end().catch(() => {});
  });
});
