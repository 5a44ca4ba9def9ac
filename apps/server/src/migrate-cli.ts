/**
 * `npm run migrate`: applies the pending migrations to DATABASE_URL, or to the embedded cluster under DATA_DIR (joined
 * when the server is running, started for the duration otherwise), and says what it applied. The server migrates on
 * start as well; this is for deployments that migrate as a separate step, before rolling out new processes.
 *
 * `runMigrate` is the whole command given its arguments, environment and output streams; migrate.ts runs it as a
 * process. Tests call it in the test process too (a spawn costs about a second of CPU), keeping a run through the
 * real process.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@leadwire/core/boot';
import type { CliIo } from './admin-cli.ts';

const USAGE = `Usage: npm run migrate [-- --dry-run]
  Applies pending migrations to DATABASE_URL, or to the embedded database under DATA_DIR.
  --dry-run  only lists the pending migrations`;

/** Runs the command; resolves to its exit code (0 done, 1 failed, 2 bad arguments), having written its output. Never rejects. */
export async function runMigrate(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await main(argv, io);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    io.stderr(`migrate: ${err instanceof ConfigError ? '' : 'failed: '}${message}\n`);
    return 1;
  }
}

async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let dryRun: boolean;
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: { 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    });
    if (values.help) {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    dryRun = values['dry-run'] ?? false;
  } catch (err) {
    io.stderr(`migrate: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`);
    return 2;
  }

  const config = loadConfig(io.env);
  // Loaded once the arguments are good, so --help and usage errors answer at once (as the admin CLI does).
  const { migrateUp, openDatabase, openOrm, pendingMigrations } = await import('@leadwire/db');
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    const orm = await openOrm(db.url, { pool: { min: 0, max: 2 } });
    try {
      const target = config.DATABASE_URL ? 'DATABASE_URL' : `the embedded database in ${config.DATA_DIR}`;
      if (dryRun) {
        const pending = await pendingMigrations(orm);
        io.stdout(pending.length ? `Pending on ${target}:\n${pending.map((n) => `  ${n}\n`).join('')}` : `Nothing pending on ${target}.\n`);
        return 0;
      }
      const applied = await migrateUp(orm);
      io.stdout(
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
