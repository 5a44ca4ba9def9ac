import { migrateUp, type MikroORM, openOrm } from '@leadwire/db';
import { MIGRATION_LOCK } from '#db/orm.ts';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * Every process migrates at start, taking turns on a session advisory lock (packages/db/src/orm.ts). A start whose
 * migrations are all applied takes no turn: it must not wait behind a process holding the lock (one applying newer
 * migrations in a rolling deployment). A fresh database still goes through the lock, so two processes never create the
 * migrations table at once. Each case holds the lock from a session of its own and watches pg_locks for a waiter: an
 * outcome either way, never a time-out.
 */

let db: TestDatabase | undefined;
let orm: MikroORM | undefined;
let holder: pg.Client | undefined;
afterEach(async () => {
  await holder?.end();
  await orm?.close(true);
  await db?.drop();
  [db, orm, holder] = [undefined, undefined, undefined];
});

/** A session of its own holding the migration lock. */
async function holdLock(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
  return client;
}

/** `work`'s result, or 'waited' as soon as a session of `database` waits for the migration lock (watched until then). */
async function unlessItWaits<T>(work: Promise<T>, admin: pg.Client, database: string): Promise<T | 'waited'> {
  let settled = false;
  const result = work.finally(() => (settled = true));
  const watch = async (): Promise<T | 'waited'> => {
    while (!settled) {
      const { rows } = await admin.query<{ n: number }>(
        `select count(*)::int as n from pg_locks
          where locktype = 'advisory' and not granted and objid = $1 and database = (select oid from pg_database where datname = $2)`,
        [MIGRATION_LOCK, database],
      );
      if (rows[0]!.n > 0) return 'waited';
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return result;
  };
  return Promise.race([result, watch()]);
}

describe('the migration lock', () => {
  it('is not waited for by a start whose migrations are all applied', async () => {
    db = await createTestDatabase('migration_lock_applied', { migrated: true });
    holder = await holdLock(db.url);
    orm = await openOrm(db.url, { pool: { min: 0, max: 2 } });
    const migrating = migrateUp(orm);
    const outcome = await unlessItWaits(migrating, holder, db.name);
    if (outcome === 'waited') {
      // Let it finish before failing, so that nothing is left waiting.
      await holder.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      await migrating;
    }
    expect(outcome).toEqual([]);
  });

  it('is waited for on a fresh database, which is migrated once the holder lets go', async () => {
    db = await createTestDatabase('migration_lock_fresh');
    holder = await holdLock(db.url);
    orm = await openOrm(db.url, { pool: { min: 0, max: 2 } });
    const migrating = migrateUp(orm);
    expect(await unlessItWaits(migrating, holder, db.name)).toBe('waited');
    const tables = await holder.query(`select to_regclass('mikro_orm_migrations') as t`);
    expect(tables.rows[0].t).toBeNull();
    await holder.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    expect((await migrating).length).toBeGreaterThan(0);
  });
});
