/**
 * `npm test`: the static checks (static-checks.ts: format check, type check and lint) and vitest start together. The
 * static checks keep about 1.4 cores busy for half a minute and the test run leaves part of two cores idle while it
 * waits on PostgreSQL and spawned servers, so overlapping them costs the tests a few seconds and saves the checks'
 * whole wall time. The checks run at a lower priority (nice 10): the tests are the longer path, so the checks take
 * the CPU the tests leave idle rather than half of what the tests want (on a busy machine, test files beside niced
 * checks ran in 40-70% of the time they took beside checks at equal priority; the checks still end long before the
 * tests). If a check fails, the test run is cancelled (its global teardown still stops the database) and the
 * command fails naming the check; the checks' report is printed after the tests' own. Arguments are vitest run's.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createVitest, parseCLI } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const started = performance.now();
const since = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;

const checks = new Promise<{ ok: boolean; output: string }>((resolve) => {
  const child = spawn(process.execPath, ['test/support/static-checks.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const nice = Number(process.env.CHECKS_NICE ?? 0);
  try {
    if (child.pid !== undefined && nice) setPriority(child.pid, nice);
  } catch {
    // Not allowed here (some containers): the checks run at the tests' priority.
  }
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
