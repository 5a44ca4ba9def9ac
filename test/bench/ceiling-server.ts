/**
 * The runtime's ceiling, a reference for the single-upsert phase: the most any Node HTTP API could do for the same
 * request. A bare `node:http` server with the same pg driver and pool size as Leadwire reads each request's JSON body
 * and runs pgbench's one-statement upsert with its email and names; no framework, no authentication, no validation,
 * no event. Driven by the same load generator over the same connections, it measures what the load generator, Node's
 * HTTP stack, the pg driver and PostgreSQL together cost on these cores, which no application code can beat.
 *
 * Run by the bench as its own process: `node test/bench/ceiling-server.ts <database url> <pool size> <seed count>`.
 * It creates and seeds its table, prints `listening <port>` and runs until SIGTERM, when it drops the table.
 */
import pg from 'pg';
import { serve } from './bare-http.ts';
import { seedEmail } from './workload.ts';

const TABLE = 'bench_ceiling_upsert';
const [url, poolArg, seedsArg] = process.argv.slice(2);
if (!url || !poolArg || !seedsArg) throw new Error('usage: ceiling-server.ts <database url> <pool size> <seed count>');
const pool = new pg.Pool({ connectionString: url, max: Number(poolArg) });

const UPSERT: pg.QueryConfig = {
  name: 'ceiling-upsert',
  text: `insert into ${TABLE} (email, first_name, last_name, updated_at) values ($1, $2, $3, now())
    on conflict (email) do update set first_name = excluded.first_name, last_name = excluded.last_name, updated_at = excluded.updated_at
    returning (xmax = 0) as created`,
};

async function setUp(seeds: number): Promise<void> {
  await pool.query(`drop table if exists ${TABLE}`);
  await pool.query(
    `create table ${TABLE} (email text primary key, first_name text not null, last_name text not null, updated_at timestamptz not null)`,
  );
  // The same addresses as the API phase's existing half, so half the requests update and half insert there too.
  const probe = seedEmail(0);
  const at = probe.indexOf('0@');
  await pool.query(`insert into ${TABLE} select $1 || g || $2, 'Seed', 'Row', now() from generate_series(0, $3::int - 1) g`, [
    probe.slice(0, at),
    probe.slice(at + 1),
    seeds,
  ]);
  await pool.query(`analyze ${TABLE}`);
}

async function main(): Promise<void> {
  await setUp(Number(seedsArg));
  serve(
    async (_req, body) => {
      const row = JSON.parse(body) as { email?: unknown; firstName?: unknown; lastName?: unknown };
      const r = await pool.query<{ created: boolean }>({ ...UPSERT, values: [row.email, row.firstName, row.lastName] });
      return { created: r.rows[0]?.created ?? false };
    },
    () => 'internal_error',
    () => pool.query(`drop table if exists ${TABLE}`).finally(() => pool.end()),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`ceiling server failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
