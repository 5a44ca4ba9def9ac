/**
 * Bundles the console (apps/console/src/main.tsx) into apps/console/dist: console.js (minified ES2022 module) and
 * console.css. Run by `npm ci` (prepare), `npm start` (prestart), the test run (vitest global setup) and
 * `npm run bench:console`. Prints each file's size, raw and gzipped as served, against the package's
 * `leadwire.gzipBudget` for both together; the budget itself is enforced by apps/console/test/size.test.ts.
 *
 * Only types come from the server (the router's, for the typed client): nothing of packages/ is in the bundle, which a
 * test checks too.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export const CONSOLE_DIR = fileURLToPath(new URL('.', import.meta.url));
export const DIST = join(CONSOLE_DIR, 'dist');

export interface BuiltFile {
  file: string;
  bytes: number;
  gzipBytes: number;
}

export interface BuiltConsole {
  files: BuiltFile[];
  gzipBytes: number;
  gzipBudget: number;
  /** Every source file in the bundle, relative to the repository root (to prove what it does not contain). */
  inputs: string[];
  /** What esbuild warned about (an unclosed CSS block, a dead import): the build still runs, a test fails on any. */
  warnings: string[];
}

const gzipSize = (bytes: Uint8Array) => gzipSync(bytes, { level: 9 }).length;

export function gzipBudget(): number {
  const meta = JSON.parse(readFileSync(join(CONSOLE_DIR, 'package.json'), 'utf8')) as { leadwire: { gzipBudget: number } };
  return meta.leadwire.gzipBudget;
}

export async function buildConsole(): Promise<BuiltConsole> {
  const result = await build({
    entryPoints: { console: join(CONSOLE_DIR, 'src', 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    // Evergreen browsers: the console is for the people running a workspace, not for every visitor of their site.
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: DIST,
    write: false,
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  await mkdir(DIST, { recursive: true });
  const files: BuiltFile[] = [];
  for (const out of result.outputFiles) {
    // Written aside and renamed: a server reading the bundle while a build runs never sees half of it.
    const partial = `${out.path}.${process.pid}.tmp`;
    await writeFile(partial, out.contents);
    await rename(partial, out.path);
    files.push({ file: out.path.slice(DIST.length + 1), bytes: out.contents.length, gzipBytes: gzipSize(out.contents) });
  }
  files.sort((a, b) => a.file.localeCompare(b.file));
  return {
    files,
    gzipBytes: files.reduce((sum, f) => sum + f.gzipBytes, 0),
    gzipBudget: gzipBudget(),
    inputs: Object.keys(result.metafile.inputs),
    warnings: result.warnings.map((w) => `${w.location?.file ?? ''}:${w.location?.line ?? ''}: ${w.text}`),
  };
}

export function describeConsole(b: BuiltConsole): string {
  const lines = b.warnings.map((w) => `warning: ${w}`);
  lines.push(...b.files.map((f) => `console/${f.file}: ${f.bytes} B minified, ${f.gzipBytes} B gzipped`));
  lines.push(`console total: ${b.gzipBytes} B gzipped (budget ${b.gzipBudget} B: ${b.gzipBytes <= b.gzipBudget ? 'ok' : 'OVER'})`);
  return lines.join('\n');
}

if (import.meta.main) process.stdout.write(`${describeConsole(await buildConsole())}\n`);

/** vitest global setup: the console's tests run against a fresh bundle, never a stale dist/. */
export default async function setup(): Promise<void> {
  await buildConsole();
}
