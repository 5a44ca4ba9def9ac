/**
 * The first step of `npm test`: the format check (Biome) and the type check with the lint (oxlint). Both are native
 * binaries, run side by side as child processes. oxlint's `--type-check` builds the program once with typescript-go
 * (tsgolint) and reports the compiler's diagnostics beside its type-aware rules over that same program: about 30 s of
 * CPU on this machine, where `tsc` and ESLint with typescript-eslint sharing one program took about 80 s (issue 26).
 * The rules are ESLint's and typescript-eslint's recommended sets as ESLint ran them (.oxlintrc.json, migrated with
 * @oxlint/migrate), with no-floating-promises among them. `npm run lint` and `npm run format:check` report the same
 * problems; `npm run typecheck` is `tsc` (TypeScript 6, the compiler the SDK's type bundle is built with).
 * Exits 1 when any fails, naming which; npm-test.ts runs it beside vitest and cancels the tests then.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const started = performance.now();
const resolveBin = (specifier: string) => createRequire(import.meta.url).resolve(specifier);

interface Outcome {
  name: string;
  ok: boolean;
  output: string;
  ms: number;
}

function run(name: string, args: string[], summary: (said: string) => string, fix: string): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const said = `${stdout}${stderr}`;
      resolve({ name, ok: !err, output: err ? `${said}\n${fix}\n` : summary(said), ms: performance.now() - started });
    });
  });
}

const outcomes = await Promise.all([
  // biome.json says what is formatted, and how.
  run(
    'format',
    [resolveBin('@biomejs/biome/bin/biome'), 'format', '--reporter=summary', '--colors=off', '.'],
    (said) => said.match(/Checked .*/)?.[0] ?? '',
    'Format them with: npm run format',
  ),
  run(
    'typecheck and lint',
    [join(ROOT, 'node_modules', 'oxlint', 'bin', 'oxlint'), '--type-aware', '--type-check', '--deny-warnings', '.'],
    (said) => said.match(/Finished .*/)?.[0] ?? '',
    'The same report: npm run lint',
  ),
]);

for (const { name, ok, output, ms } of outcomes) {
  process.stdout.write(`${ok ? '✓' : '✗'} ${name} ${ok ? 'passed' : 'FAILED'} in ${(ms / 1000).toFixed(1)} s\n`);
  if (output.trim()) process.stdout.write(`${output.trimEnd()}\n`);
}
const failed = outcomes.filter((o) => !o.ok).map((o) => o.name);
if (failed.length) {
  process.stdout.write(`\nnpm test fails: ${failed.join(', ')} failed.\n`);
  process.exit(1);
}
