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

/** Databases of this run still present: after the run, the ones failed files kept. */
export async function keptDatabases(adminUrl: string, prefix: string): Promise<string[]> {
  return withAdmin(adminUrl, async (c) => {
    const { rows } = await c.query<{ datname: string }>(`select datname from pg_database where starts_with(datname, $1) order by datname`, [
      prefix,
    ]);
    return rows.map((r) => r.datname);
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
