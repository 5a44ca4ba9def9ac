/**
 * The operator CLIs (`npm run --silent admin -- ...`, `npm run migrate`) run in the test process: the same `runAdmin`
 * and `runMigrate` that apps/server/src/admin.ts and migrate.ts run, given `env` as their whole environment and their
 * output captured. For set-up (a bootstrap for its keys) and for the CLIs' own cases; test/process/admin-cli.test.ts
 * keeps runs through the real processes. The scrypt cost is the test apps' (the admin CLI sets it process-wide, as the
 * server does at boot).
 */
import { runAdmin, type CliIo } from '../../apps/server/src/admin-cli.ts';
import { runMigrate } from '../../apps/server/src/migrate-cli.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export const adminHere = (args: readonly string[], env: Record<string, string>): Promise<CliRun> =>
  captured((io) => runAdmin(args, io), { PASSWORD_HASH_COST: '12', ...env });

export const migrateHere = (args: readonly string[], env: Record<string, string>): Promise<CliRun> =>
  captured((io) => runMigrate(args, io), env);

async function captured(command: (io: CliIo) => Promise<number>, env: Record<string, string>): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await command({ env, stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}
