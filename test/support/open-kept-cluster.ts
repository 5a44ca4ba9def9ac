/**
 * Starts the cluster a failed test run kept (see global-setup.ts), prints the URL of every database in it and runs
 * until Ctrl-C: `node_modules/.bin/node test/support/open-kept-cluster.ts /dev/shm/leadwire-test-pg-XXXXXX` (the folder
 * the run printed).
 */
import path from 'node:path';
import { startEmbeddedPostgres } from '../../packages/db/src/embedded.ts';
import { databaseUrl, withAdmin } from './pg-admin.ts';

const root = process.argv[2];
if (!root) {
  process.stderr.write('Usage: node_modules/.bin/node test/support/open-kept-cluster.ts <kept cluster folder>\n');
  process.exit(2);
}
const cluster = await startEmbeddedPostgres({ dataDir: path.join(path.resolve(root), 'postgres') });
const names = await withAdmin(cluster.url, async (c) =>
  (await c.query<{ datname: string }>(`select datname from pg_database where datname like 't\\_%' order by 1`)).rows.map((r) => r.datname),
);
process.stdout.write(`${names.map((n) => databaseUrl(cluster.url, n)).join('\n')}\nCtrl-C stops the cluster.\n`);
const stop = (): void => void cluster.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
