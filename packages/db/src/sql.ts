import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

/**
 * The one way services reach PostgreSQL: statements with `?` placeholders, run as named prepared statements. `PgDb` runs
 * them on the pool, `TxDb` inside a transaction; both open a transaction the same way, so a service neither knows nor
 * asks which it was given.
 */
export interface Db {
  execute<T = Record<string, unknown>[]>(sql: string, params?: unknown[]): Promise<T>;
  /** Runs `fn` in a transaction: a new one on the pool; inside a transaction, that same transaction. */
  transaction<T>(fn: (tx: TxDb) => Promise<T>): Promise<T>;
  /** SQL as written (`$n` placeholders), unprepared: for libraries such as pg-boss that bring their own statements. */
  raw(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /**
   * Work to run once the surrounding transaction has committed, outside it (e.g. bumping a shared counter without
   * holding its lock); on the pool, at once.
   */
  afterCommit(fn: (db: Db) => Promise<unknown>): Promise<void> | void;
}

interface Compiled {
  name: string;
  text: string;
}

const compiled = new Map<string, Compiled>();

/**
 * A select list or `returning` that expands `*` (`select *`, `c.*`, `(x).*`, `returning *`). String literals and
 * comments are blanked first, so a `*` inside them is not one, and neither is `count(*)` or `a * b`.
 */
const STAR = /\b(?:select(?:\s+distinct(?:\s+on\s*\([^)]*\))?|\s+all)?|returning)\s+\*|,\s*\*|[\w")\]]\s*\.\s*\*/i;

/** The part of `sql` that expands `*`, or null. Exported for tests and for tools that scan statements. */
export function findStar(sql: string): string | null {
  const bare = sql.replace(/'(?:[^']|'')*'|--[^\n]*|\/\*[\s\S]*?\*\//g, (m) => ' '.repeat(m.length));
  const m = STAR.exec(bare);
  return m ? sql.slice(Math.max(0, m.index - 20), m.index + m[0].length).replace(/\s+/g, ' ').trim() : null;
}

/**
 * Statements name their columns. A prepared statement that expands `*` keeps the column list it was planned with, so
 * once a migration adds a column every pooled connection that prepared it fails with "cached plan must not change
 * result type" until the process restarts: exactly a rolling deploy. Refused when first compiled, so the first test
 * that runs such a statement fails.
 */
export class StarStatementError extends Error {
  constructor(sql: string, found: string) {
    super(`Statements must name their columns; this one expands * near "${found}": ${sql.replace(/\s+/g, ' ').trim().slice(0, 200)}`);
    this.name = 'StarStatementError';
  }
}

/** A table's columns as a select or `returning` list, qualified by `alias` when given: `a.id, a.name`. */
export const columnList = (names: readonly string[], alias?: string): string =>
  names.map((n) => (alias ? `${alias}.${n}` : n)).join(', ');

/**
 * `?` placeholders become `$n`, and each distinct statement gets a stable name, so pg prepares it once per connection
 * and PostgreSQL skips parsing and planning on every later call. Statements are module constants, so the cache is
 * bounded by the code, not by traffic. None of ours uses the jsonb `?` operator.
 */
function compile(sql: string): Compiled {
  let c = compiled.get(sql);
  if (!c) {
    const star = findStar(sql);
    if (star !== null) throw new StarStatementError(sql, star);
    let n = 0;
    c = { name: `lw_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`, text: sql.replace(/\?/g, () => `$${++n}`) };
    compiled.set(sql, c);
  }
  return c;
}

type Queryable = Pick<PoolClient, 'query'>;

async function run<T>(target: Queryable, sql: string, params: unknown[]): Promise<T> {
  const { name, text } = compile(sql);
  const result = await target.query({ name, text, values: params });
  return result.rows as T;
}

/** A transaction's connection. `raw` runs SQL as written ($n placeholders), for libraries such as pg-boss. */
export class TxDb implements Db {
  readonly client: PoolClient;
  /** Work to run once the transaction has committed, outside it (e.g. bumping a shared counter without holding its lock). */
  readonly committed: ((db: Db) => Promise<unknown>)[] = [];
  constructor(client: PoolClient) {
    this.client = client;
  }
  afterCommit(fn: (db: Db) => Promise<unknown>): void {
    this.committed.push(fn);
  }
  execute<T = Record<string, unknown>[]>(sql: string, params: unknown[] = []): Promise<T> {
    return run<T>(this.client, sql, params);
  }
  /** Already in one: the work joins it and commits or rolls back with it. */
  transaction<T>(fn: (tx: TxDb) => Promise<T>): Promise<T> {
    return fn(this);
  }
  async raw(text: string, values: unknown[] = []): Promise<{ rows: unknown[] }> {
    return this.client.query(text, values);
  }
}

/** The hot path's way to the database: the ORM's own pg pool, with prepared statements and plain transactions. */
export class PgDb implements Db {
  readonly pool: Pool;
  private readonly onError: (err: unknown) => void;
  constructor(pool: Pool, opts: { onAfterCommitError?: (err: unknown) => void } = {}) {
    this.pool = pool;
    this.onError = opts.onAfterCommitError ?? (() => {});
  }

  execute<T = Record<string, unknown>[]>(sql: string, params: unknown[] = []): Promise<T> {
    return run<T>(this.pool, sql, params);
  }

  async raw(text: string, values: unknown[] = []): Promise<{ rows: unknown[] }> {
    return this.pool.query(text, values);
  }

  /** Nothing to wait for outside a transaction. */
  async afterCommit(fn: (db: Db) => Promise<unknown>): Promise<void> {
    await fn(this);
  }

  async transaction<T>(fn: (tx: TxDb) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    const tx = new TxDb(client);
    try {
      await client.query('begin');
      const result = await fn(tx);
      await client.query('commit');
      // On the same connection, now outside the transaction: asking the pool for another one while holding this one
      // would deadlock once every connection is held. The data is committed whatever happens here, so a failure is
      // reported, not thrown at the caller.
      for (const job of tx.committed) await job(tx).catch(this.onError);
      return result;
    } catch (err) {
      try {
        await client.query('rollback');
      } catch {
        // The connection is unusable; it is destroyed below instead of going back to the pool.
        broken = true;
      }
      throw err;
    } finally {
      client.release(broken);
    }
  }
}
