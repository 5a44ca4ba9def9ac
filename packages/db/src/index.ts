export * from './entities/index.ts';
export * from './orm.ts';
export * from './database.ts';
export * from './sql.ts';
export { qb, statement, type DB, type Query, type Statement } from './statements.ts';
export { sql } from 'kysely';
/** A table's row as selected: `Selectable<DB['users']>`, for row types no single statement gives. */
export type { Selectable } from 'kysely';
export * from './channel-listener.ts';
export type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
export { DatabaseTimeoutError, DatabaseUnavailableError } from './bounded.ts';
