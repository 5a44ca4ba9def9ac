/**
 * `npm test`: the static checks (static-checks.ts: format check, type check and lint) and vitest start together, at
 * the same priority. The checks are one mostly single-threaded process; niced (as they were until issue 26) they got
 * only the CPU the tests left idle, which the tiered run leaves little of, and became the run's tail, running alone
 * on one core after the tests: in two full runs on the same (busy, shared) 2-core machine, niced they ended 71 s after
 * the tests, at equal priority 144 s before them. If a check fails, the test run is cancelled (its global teardown
 * still stops the database) and the command fails naming the check; the checks' report is printed after the tests'
 * own, with when each ended. Arguments are vitest run's.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createVitest, parseCLI } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const started = performance.now();
const since = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;

const checks = new Promise<{ ok: boolean; output: string }>((resolve) => {
  const child = spawn(process.execPath, ['test/support/static-checks.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.once('error', (err) => resolve({ ok: false, output: `${output}${err.message}\n` }));
  child.once('close', (code) => resolve({ ok: code === 0, output: `${output}The static checks ended at ${since()}.\n` }));
});

// What `vitest run <args>` would take: file filters and options such as --reporter.
const { filter, options } = parseCLI(['vitest', 'run', ...process.argv.slice(2)]);
const vitest = await createVitest({ ...options, watch: false, root: ROOT });
let cancelled = false;
void checks.then(async ({ ok, output }) => {
  if (ok) return;
  cancelled = true;
  process.stdout.write(`\n${output}`);
  await vitest.cancelCurrentRun('keyboard-input');
});
try {
  if (!cancelled) await vitest.start(filter);
} finally {
  await vitest.close();
}
const testsEnded = since();
const result = await checks;
process.stdout.write(
  cancelled ? '\nThe tests were cancelled: the static checks failed (above).\n' : `\n${result.output}The tests ended at ${testsEnded}.\n`,
);
process.exit(result.ok ? (process.exitCode ?? 0) : 1);
