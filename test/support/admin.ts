/**
 * The operator CLI (`npm run --silent admin -- ...`) run in the test process: the same `runAdmin` that
 * apps/server/src/admin.ts runs, given `env` as its whole environment and its output captured. For set-up (a bootstrap
 * for its keys) and for the CLI's own argument and refusal cases; test/process/admin-cli.test.ts keeps runs through the
 * real process. The scrypt cost is the test apps' (the CLI sets it process-wide, as the server does at boot).
 */
import { runAdmin } from '../../apps/server/src/admin-cli.ts';

export interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function adminHere(args: readonly string[], env: Record<string, string>): Promise<AdminRun> {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(args, {
    env: { PASSWORD_HASH_COST: '12', ...env },
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  return { code, stdout, stderr };
}
