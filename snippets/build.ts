/**
 * Builds every browser package under snippets/: each folder with a package.json and a `src/index.ts` becomes one
 * minified IIFE at `snippets/<name>/dist/<output>` (`leadwire.output` in its package.json, `<name>.js` by default).
 * Run by `npm ci` (prepare), `npm start` (prestart), the test run (vitest global setup) and `npm run bench:size`.
 * Prints each bundle's size, raw and gzipped as served, against its `leadwire.gzipBudget`; the budget itself is
 * enforced by the tests (snippets/<name>/test), so a build over it still runs and says so.
 *
 * Nothing here imports from the server: snippets/ is a leaf of the repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export const SNIPPETS_DIR = fileURLToPath(new URL('.', import.meta.url));

export interface SnippetPackage {
  name: string;
  dir: string;
  entry: string;
  outFile: string;
  gzipBudget: number | undefined;
}

export interface BuiltSnippet extends SnippetPackage {
  bytes: number;
  gzipBytes: number;
}

/** Every package under snippets/, by convention: a folder holding package.json and src/index.ts. */
export function snippetPackages(root = SNIPPETS_DIR): SnippetPackage[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'package.json')) && existsSync(join(root, d.name, 'src', 'index.ts')))
    .map((d) => {
      const dir = join(root, d.name);
      const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { leadwire?: { output?: string; gzipBudget?: number } };
      return {
        name: d.name,
        dir,
        entry: join(dir, 'src', 'index.ts'),
        outFile: join(dir, 'dist', meta.leadwire?.output ?? `${d.name}.js`),
        gzipBudget: meta.leadwire?.gzipBudget,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The size a browser downloads: gzip at its highest level, as a server or CDN compresses a static file. */
export const gzipSize = (bytes: Uint8Array): number => gzipSync(bytes, { level: 9 }).length;

export async function buildSnippet(pkg: SnippetPackage): Promise<BuiltSnippet> {
  const result = await build({
    entryPoints: [pkg.entry],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    // Browsers of the last few years; nothing newer than ES2020 is needed by the snippets.
    target: 'es2020',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.contents;
  await mkdir(join(pkg.dir, 'dist'), { recursive: true });
  // Written aside and renamed: a server (or test) reading the bundle while a build runs never sees half of it.
  const partial = `${pkg.outFile}.${process.pid}.tmp`;
  await writeFile(partial, code);
  await rename(partial, pkg.outFile);
  return { ...pkg, bytes: code.length, gzipBytes: gzipSize(code) };
}

export async function buildAll(root = SNIPPETS_DIR): Promise<BuiltSnippet[]> {
  return Promise.all(snippetPackages(root).map(buildSnippet));
}

export function describeSize(b: BuiltSnippet): string {
  const budget = b.gzipBudget === undefined ? '' : ` (budget ${b.gzipBudget} B: ${b.gzipBytes <= b.gzipBudget ? 'ok' : 'OVER'})`;
  return `${b.name}: ${b.bytes} B minified, ${b.gzipBytes} B gzipped${budget}`;
}

if (import.meta.main) {
  const built = await buildAll();
  for (const b of built) process.stdout.write(`${describeSize(b)}\n`);
}

/** vitest global setup: tests run against freshly built bundles, never a stale dist/. */
export default async function setup(): Promise<void> {
  await buildAll();
}
