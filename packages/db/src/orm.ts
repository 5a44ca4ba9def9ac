import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { allEntities } from './entities/index.ts';
import { PgDb } from './sql.ts';

export const migrationsPath = fileURLToPath(new URL('../../../migrations', import.meta.url));

export function ormOptions(clientUrl: string, extra: Partial<Options> = {}): Options {
  return {
    clientUrl,
    entities: allEntities,
    extensions: [Migrator],
    // No snapshot file: the schema-diff test compares the migrated database with the entities directly.
    migrations: { path: migrationsPath, emit: 'ts', transactional: true, allOrNothing: true, snapshot: false, silent: true },
    // Statements go through our own structured logger (with secrets redacted), never MikroORM's console logger.
    debug: false,
    pool: { min: 0, max: 20 },
    ...extra,
  };
}

export async function openOrm(clientUrl: string, extra: Partial<Options> = {}): Promise<MikroORM> {
  return MikroORM.init(ormOptions(clientUrl, extra));
}

/**
 * The one way services reach the database (see sql.ts), on the ORM's own pool: MikroORM keeps the schema (entities and
 * migrations), PgDb runs every statement.
 */
export async function openDb(orm: MikroORM, opts: { onAfterCommitError?: (err: unknown) => void } = {}): Promise<PgDb> {
  return new PgDb(await orm.em.getConnection().getNativeClient(), opts);
}

/** Arbitrary but fixed: every Leadwire process agrees on it. */
const MIGRATION_LOCK = 7_340_112;

/**
 * Applies every pending migration; returns the names applied. Processes starting together on one database (an api and
 * a worker rolled out at once) take turns on a session advisory lock, so the second finds nothing left to do.
 */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  const lock = new pg.Client({ connectionString: orm.config.get('clientUrl') });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const applied = await orm.migrator.up();
    return applied.map((m) => m.name);
  } finally {
    await lock.end();
  }
}

export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  return (await orm.migrator.getPending()).map((m) => m.name);
}
