/**
 * `npm run bench:suite` (`-- --quick` for `npm run test:quick`): runs the test suite as a contributor does and prints
 * how long it took against its goal (docs/testing.md: `npm test` at most 150 s, `test:quick` under 60 s, on the 2-core
 * machine the suite is sized for), the ratio to a same-run reference (reference-work.ts: one process a core, before
 * and after the suite, averaged), the machine's CPU over the run and where it went, by part (process-meter.ts), and a
 * final `BENCH_RESULT {json}` line. Run it on an otherwise idle machine: it says so when it is not. The suite's own
 * output goes to a log file, named at the start; a failed suite prints its end and exits 1. It reports; it never fails
 * on timings.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machineBusyCores, machineBusySeconds } from './cpu.ts';
import { processMeter } from './process-meter.ts';
import type { FileCpu } from '../support/file-cpu.ts';
import { testTiers, tierOf } from '../support/tiers.ts';
import { formatFiles, formatSuite, type SuiteFigures, suiteJson } from './suite-report.ts';

const ROOT = path.join(import.meta.dirname, '..', '..');
const quick = process.argv.includes('--quick');
const command = quick ? 'npm run test:quick' : 'npm test';
const GOAL_SECONDS = quick ? 60 : 150;
/** Often enough to see a server start and stop, seldom enough that the sweeps cost the run about 1 % of a core. */
const SAMPLE_MS = 200;
const PROGRESS_MS = 30_000;
const log = (msg: string) => process.stderr.write(`${msg}\n`);

/** One reference process a core, at once: the wall time until the last ends, and their CPU. */
async function reference(cores: number): Promise<{ wallSeconds: number; cpuSeconds: number; processes: number }> {
  const started = performance.now();
  const runs = await Promise.all(
    Array.from(
      { length: cores },
      () =>
        new Promise<number>((resolve, reject) => {
          const child = spawn(process.execPath, [path.join(import.meta.dirname, 'reference-work.ts')], {
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
          child.once('error', reject);
          child.once('close', (code) =>
            code === 0
              ? resolve((JSON.parse(out) as { cpuSeconds: number }).cpuSeconds)
              : reject(new Error(`the reference work exited ${code}`)),
          );
        }),
    ),
  );
  return { wallSeconds: (performance.now() - started) / 1000, cpuSeconds: runs.reduce((a, b) => a + b, 0), processes: cores };
}

const cores = os.availableParallelism();
const busy = await machineBusyCores(1_000);
if (busy !== null && busy > 0.2) log(`warning: ${busy.toFixed(2)} cores were busy before the run: the figures will be high`);
const before = await reference(cores);
log(`reference before the run: ${before.wallSeconds.toFixed(2)} s`);

const logDir = mkdtempSync(path.join(os.tmpdir(), 'leadwire-bench-suite-'));
const logFile = path.join(logDir, 'suite.log');
// Each test file's cost, a JSON line per file (test/support/file-cpu.ts).
const filesFile = path.join(logDir, 'files.jsonl');
log(`running ${command} (its output: ${logFile})`);
const out = openSync(logFile, 'w');
const meter = processMeter(SAMPLE_MS);
const busy0 = machineBusySeconds();
const started = performance.now();
const [bin, ...args] = command.split(' ');
// A process group of its own, so that an interrupted bench stops the whole run: its servers, clusters and browser.
const child = spawn(bin!, args, {
  cwd: ROOT,
  detached: true,
  stdio: ['ignore', out, out],
  env: { ...process.env, LEADWIRE_FILE_CPU: filesFile },
});
const stopRun = () => {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // Already over.
  }
};
process.once('SIGINT', stopRun);
process.once('SIGTERM', stopRun);
const progress = setInterval(() => {
  const elapsed = (performance.now() - started) / 1000;
  log(`  ${elapsed.toFixed(0)} s: ${(machineBusySeconds() - busy0).toFixed(0)} s of the machine's CPU`);
}, PROGRESS_MS);
const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
const wallSeconds = (performance.now() - started) / 1000;
const machineCpuSeconds = machineBusySeconds() - busy0;
clearInterval(progress);
const totals = meter.stop();

const after = await reference(cores);
log(`reference after the run: ${after.wallSeconds.toFixed(2)} s`);
// The suite's own files: a test that runs vitest on fixtures of its own records those too.
const suiteFiles = new Set(Object.values(testTiers(ROOT)).flat());
const files = existsSync(filesFile)
  ? readFileSync(filesFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as FileCpu)
      .filter((f) => suiteFiles.has(f.file))
      .map((f) => ({ ...f, tier: tierOf(f.file) }))
  : [];
const attributed = totals.parts.reduce((sum, p) => sum + p.cpuSeconds, 0) + totals.selfSeconds;
const figures: SuiteFigures = {
  command,
  cores,
  goalSeconds: GOAL_SECONDS,
  passed: code === 0,
  wallSeconds,
  machineCpuSeconds,
  parts: totals.parts,
  unattributedSeconds: Math.max(0, machineCpuSeconds - attributed),
  benchCpuSeconds: totals.selfSeconds,
  reference: {
    wallSeconds: (before.wallSeconds + after.wallSeconds) / 2,
    cpuSeconds: (before.cpuSeconds + after.cpuSeconds) / 2,
    processes: cores,
  },
  files,
};
process.stdout.write(`\n${formatSuite(figures)}\n\n${formatFiles(figures.files)}\n\nBENCH_RESULT ${JSON.stringify(suiteJson(figures))}\n`);
if (code !== 0) {
  const tail = readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
  process.stdout.write(`\nThe end of its output (all of it in ${logFile}):\n${tail}\n`);
  process.exit(1);
}
