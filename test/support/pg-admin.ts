/** Server-level helpers shared by the global setup (main process) and db.ts (test workers); no vitest imports. */
import pg from 'pg';

export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The embedded cluster's fixed local password is needed to connect; a DATABASE_URL's password is a secret. */
export function shownUrl(url: string): string {
  if (!process.env.DATABASE_URL) return url;
  const shown = new URL(url);
  if (shown.password) shown.password = '***';
  return shown.toString();
}

/** The comment on a database a failed file keeps for inspection (db.ts): what tells it from one whose drop was cut short. */
export const KEPT = 'kept for inspection: a test of its file failed';

/**
 * After the run: drops what is left of it but was not kept (a drop that a worker's exit cut short, running in the
 * background when the worker ended) and returns the databases failed files kept.
 */
export async function settleRunDatabases(adminUrl: string, prefix: string): Promise<string[]> {
  return withAdmin(adminUrl, async (c) => {
    const { rows } = await c.query<{ datname: string; kept: boolean }>(
      `select datname, shobj_description(oid, 'pg_database') is not distinct from $2 as kept
         from pg_database where starts_with(datname, $1) order by datname`,
      [prefix, KEPT],
    );
    for (const { datname } of rows.filter((r) => !r.kept))
      await c.query(`drop database if exists ${c.escapeIdentifier(datname)} with (force)`);
    return rows.filter((r) => r.kept).map((r) => r.datname);
  });
}

export async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
