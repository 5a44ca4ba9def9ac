import { fileURLToPath } from 'node:url';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { allEntities } from './entities/index.ts';

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

/** Applies every pending migration; returns the names applied. */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}

export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  return (await orm.migrator.getPending()).map((m) => m.name);
}
