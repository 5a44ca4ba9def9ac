/**
 * The first step of `npm test`: the format check, the type check and the linter. The format check (Biome, a native
 * binary: about 1 s of CPU for the whole tree) runs as a child process beside the other two, which share one process
 * over one TypeScript program. The linter's type-aware rules need the same program `tsc` builds; given ours through `parserOptions.programs`, they reuse its
 * parsed, bound and already checked types instead of building their own (about 24 s for both, against about 36 s for
 * `tsc` and `eslint` side by side on two cores, which also kept both cores busy). `npm run typecheck` and
 * `npm run lint` and `npm run format:check` stay the plain commands and report the same problems. Exits 1 when any
 * fails, naming which; npm-test.ts runs it beside vitest and cancels the tests then.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let lap = performance.now();
/** `ms` null: a check that says its own time. */
const report = (name: string, ok: boolean, output: string, ms: number | null = performance.now() - lap) => {
  const took = ms === null ? '' : ` in ${(ms / 1000).toFixed(1)} s`;
  lap = performance.now();
  process.stdout.write(`${ok ? '✓' : '✗'} ${name} ${ok ? 'passed' : 'FAILED'}${took}\n`);
  if (output.trim()) process.stdout.write(`${output.trimEnd()}\n`);
};

/** `tsc -p tsconfig.json`: the config's own errors, then every file's syntactic, global and semantic diagnostics. */
function typecheck(): { program: ts.Program; ok: boolean; output: string } {
  const configErrors: ts.Diagnostic[] = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => configErrors.push(d),
  });
  const program = ts.createProgram({
    rootNames: parsed?.fileNames ?? [],
    options: parsed?.options ?? {},
    projectReferences: parsed?.projectReferences,
    configFileParsingDiagnostics: [...configErrors, ...(parsed?.errors ?? [])],
  });
  const diagnostics = [...configErrors, ...ts.getPreEmitDiagnostics(program)];
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
  const output = process.stdout.isTTY
    ? ts.formatDiagnosticsWithColorAndContext(diagnostics, host)
    : ts.formatDiagnostics(diagnostics, host);
  return { program, ok: parsed !== undefined && diagnostics.length === 0, output };
}

/** `eslint .` with eslint.config.js, its TypeScript files given the type check's program instead of the project service. */
async function lint(program: ts.Program): Promise<{ ok: boolean; output: string }> {
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parserOptions: { programs: [program], projectService: false } } }],
  });
  const results = await eslint.lintFiles(['.']);
  const formatter = await eslint.loadFormatter('stylish');
  const output = await formatter.format(results);
  return { ok: results.every((r) => r.errorCount === 0 && r.fatalErrorCount === 0), output };
}

/**
 * `biome format .` (biome.json says what is formatted, and how), started first: a child process, so it runs while the
 * type check holds this one. It reports its own time, as this process cannot time it while busy.
 */
function formatCheck(): Promise<{ ok: boolean; output: string }> {
  const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');
  const args = [biome, 'format', '--reporter=summary', '--colors=off', '.'];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const said = `${stdout}${stderr}`;
      const output = err ? `${said}\nFormat them with: npm run format\n` : (said.match(/Checked .*/)?.[0] ?? '');
      resolve({ ok: !err, output });
    });
  });
}

const formatted = formatCheck();
const checked = typecheck();
report('typecheck', checked.ok, checked.output);
const linted = await lint(checked.program).catch((err: unknown) => ({
  ok: false,
  output: err instanceof Error ? (err.stack ?? err.message) : String(err),
}));
report('lint', linted.ok, linted.output);
const format = await formatted;
report('format', format.ok, format.output, null);

const failed = [format.ok ? [] : ['format'], checked.ok ? [] : ['typecheck'], linted.ok ? [] : ['lint']].flat();
if (failed.length) {
  process.stdout.write(`\nnpm test fails: ${failed.join(', ')} failed.\n`);
  process.exit(1);
}
