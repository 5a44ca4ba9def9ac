import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { allEntities } from './entities/index.ts';
import { measureClockOffset } from './bounded.ts';
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
    // The functions of the one-trip writes (Migration20261128150000) are written by hand in their migration, as SQL no
    // entity describes: the schema diff compares tables, and leaves routines to their own tests (one-trip-merge,
    // statements-prepare) instead of proposing to drop them.
    schemaGenerator: { ignoreRoutines: true },
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

export interface RequestDbOptions {
  max: number;
  acquireTimeoutMs: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  queryTimeoutMs: number;
  transactionTimeoutMs: number;
  onAfterCommitError?: (err: unknown) => void;
  /** A connection that broke while idle in the pool (the server went away); the pool has already dropped it. */
  onConnectionError?: (err: Error) => void;
  /** Another server than the ORM's (a read replica): its `postgres://` URL; the ORM's type parsers are kept. */
  url?: string;
  /** Shown in pg_stat_activity; `leadwire-requests` by default. */
  applicationName?: string;
}

/** pg-pool's hook as it runs it: awaited before the connection is handed out, a failure ends it (@types/pg says void). */
interface PoolConfigWithHook extends Omit<pg.PoolConfig, 'onConnect'> {
  onConnect: (client: pg.ClientBase) => Promise<void>;
}

/**
 * The request path's database: a pool of its own beside the ORM's (which keeps migrations and background work free of
 * these limits), with the ORM's connection settings and type parsers, and every wait bounded. The server-side limits are
 * set once per new connection, one round trip, not in the start-up packet: PgBouncer refuses start-up parameters it does
 * not know (the pool would never connect), and one told to ignore them would drop the limits silently. A session left
 * idle in a transaction past its budget (the process frozen) is ended by the server.
 */
export async function openRequestDb(orm: MikroORM, opts: RequestDbOptions): Promise<PgDb> {
  const ormPool = await orm.em.getConnection().getNativeClient();
  const base = (ormPool as unknown as { options: pg.PoolConfig }).options;
  const { host, port, user, database, ...rest } = base;
  // pg-pool keeps the password non-enumerable, out of the spread.
  const server = opts.url ? { connectionString: opts.url } : { host, port, user, database, password: base.password };
  // The same round trip reads the server's clock, for the deadlines statements check on it (bounded.ts).
  const setLimits = async (client: pg.ClientBase) => {
    await measureClockOffset(
      client,
      `set statement_timeout = ${ms(opts.statementTimeoutMs)}; set lock_timeout = ${ms(opts.lockTimeoutMs)}; ` +
        `set idle_in_transaction_session_timeout = ${ms(opts.transactionTimeoutMs)}; `,
    );
  };
  const config: PoolConfigWithHook = {
    ...rest,
    ...server,
    min: 0,
    max: opts.max,
    connectionTimeoutMillis: opts.acquireTimeoutMs,
    application_name: opts.applicationName ?? 'leadwire-requests',
    onConnect: setLimits,
  };
  const pool = new pg.Pool(config);
  const onError = opts.onConnectionError ?? (() => {});
  // An 'error' event without a listener would take the process down; the query in flight rejects on its own.
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
  return new PgDb(pool, {
    queryTimeoutMs: opts.queryTimeoutMs,
    transactionTimeoutMs: opts.transactionTimeoutMs,
    ...(opts.onAfterCommitError ? { onAfterCommitError: opts.onAfterCommitError } : {}),
  });
}

/** A whole number of milliseconds, written into SET (which takes no parameters): anything else is a bug, refused. */
function ms(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not a time-out in milliseconds: ${value}`);
  return value;
}

/** Arbitrary but fixed: every Leadwire process agrees on it. */
export const MIGRATION_LOCK = 7_340_112;

/**
 * Applies every pending migration; returns the names applied. Processes starting together on one database (an api and
 * a worker rolled out at once) take turns on a session advisory lock, so the second finds nothing left to do.
 *
 * A start that finds every migration of its code applied (nearly every start) takes no lock: it opens no session for
 * it, and does not wait behind a process applying newer ones (a rolling deployment's long migration). The check needs
 * the migrations table to exist already: reading pending migrations creates it otherwise, which two processes on a
 * fresh database must not do at once, so a fresh database goes straight to the lock.
 */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  if ((await migrationsTableExists(orm)) && (await pendingMigrations(orm)).length === 0) return [];
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

async function migrationsTableExists(orm: MikroORM): Promise<boolean> {
  const table = orm.config.get('migrations').tableName ?? 'mikro_orm_migrations';
  const [row] = await orm.em.getConnection().execute<{ ok: boolean }[]>('select to_regclass(?) is not null as ok', [table]);
  return row?.ok === true;
}

export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  return (await orm.migrator.getPending()).map((m) => m.name);
}
