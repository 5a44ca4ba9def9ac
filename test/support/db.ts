import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export interface TestDatabase {
  url: string;
  /** Drops the database, closing any connection still open on it; safe to call twice. */
  drop(): Promise<void>;
}

/**
 * Creates an empty database on the run's server (see global-setup.ts). Names are
 * always made unique, because test files run in parallel and, against a shared
 * DATABASE_URL, runs may overlap or leave databases behind: `name` only labels it
 * (`t_<name>_<random>`) so a leftover can be traced back to its test.
 */
export async function createTestDatabase(name?: string): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const label = (name ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .slice(0, 40);
  const dbName = `t_${label ? `${label}_` : ''}${randomBytes(6).toString('hex')}`;

  await withAdmin(adminUrl, async (client) => {
    await client.query(`create database ${client.escapeIdentifier(dbName)}`);
  });

  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  let dropping: Promise<void> | undefined;
  return {
    url: url.toString(),
    drop: () =>
      (dropping ??= withAdmin(adminUrl, async (client) => {
        await client.query(`drop database if exists ${client.escapeIdentifier(dbName)} with (force)`);
      })),
  };
}

async function withAdmin(adminUrl: string, fn: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}
