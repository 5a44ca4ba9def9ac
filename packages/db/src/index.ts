export * from './entities/index.ts';
export * from './orm.ts';
export * from './database.ts';
export * from './sql.ts';
export { builtStatements, findStar, qb, StarStatementError, statement, type DB, type Query, type Statement } from './statements.ts';
export { jsonRows } from './json-rows.ts';
export { sql } from 'kysely';
/** Kysely's helpers and types services need (core does not depend on kysely itself). */
export {
  expressionBuilder,
  type Expression,
  type ExpressionBuilder,
  type QueryCreator,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
} from 'kysely';
export * from './channel-listener.ts';
export type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
export { DatabaseTimeoutError, DatabaseUnavailableError } from './bounded.ts';
export * from './replicas.ts';
