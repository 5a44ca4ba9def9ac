/**
 * Builds `@leadwire/sdk` into sdk/dist: one ESM bundle per entry point (esbuild) and one bundled declaration file per
 * library entry (dts-bundle-generator; the internal entry's router type by ./internal-types.ts). Run by `npm pack` and
 * `npm publish` (prepack), or as `node sdk/scripts/build.ts`. ENTRIES is the one list of what the package holds:
 * sdk/package.json's exports and bin must match it (the pack test checks), and an entry whose source does not exist
 * yet is reported as missing, never skipped in silence.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { generateDtsBundle } from 'dts-bundle-generator';
import { build, type BuildOptions } from 'esbuild';

export const SDK_DIR = join(import.meta.dirname, '..');
const REPO = join(SDK_DIR, '..');

export interface Entry {
  /** The export's subpath ('.', './webhooks'), or 'bin' for the command line. */
  name: string;
  /** The source, relative to sdk/. */
  source: string;
  /** The bundle's base name under dist/. */
  out: string;
  /** 'neutral' for code that may use fetch and Web Crypto only; 'node' for the command line. */
  platform: 'neutral' | 'node';
  /** How its declarations are made: bundled from the sources, the internal router's generator, or none (the CLI). */
  types: 'bundle' | 'internal' | 'none';
  /** Imports left to the installing application (peer dependencies). */
  external?: string[];
}

export const ENTRIES: readonly Entry[] = [
  { name: '.', source: 'src/index.ts', out: 'index', platform: 'neutral', types: 'bundle' },
  { name: './webhooks', source: 'src/webhooks.ts', out: 'webhooks', platform: 'neutral', types: 'bundle' },
  { name: './internal', source: 'src/internal.ts', out: 'internal', platform: 'neutral', types: 'internal', external: ['@trpc/client'] },
  { name: 'bin', source: 'src/cli/main.ts', out: 'cli', platform: 'node', types: 'none' },
];

/** What sdk/package.json must declare for ENTRIES: the exports map and the bin. */
export function manifestOf(entries: readonly Entry[] = ENTRIES) {
  const exports: Record<string, { types: string; import: string }> = {};
  let bin: Record<string, string> | undefined;
  for (const e of entries) {
    if (e.name === 'bin') bin = { leadwire: `./dist/${e.out}.js` };
    else exports[e.name] = { types: `./dist/${e.out}.d.ts`, import: `./dist/${e.out}.js` };
  }
  return { exports: { ...exports, './package.json': './package.json' }, bin };
}

const hasHashbang = (entry: Entry) =>
  existsSync(join(SDK_DIR, entry.source)) && readFileSync(join(SDK_DIR, entry.source), 'utf8').startsWith('#!');

/** esbuild's options for one entry: ESM for Node 20 and browsers of the same age, readable (not minified). */
export function esbuildOptions(entry: Entry, outDir: string): BuildOptions {
  return {
    entryPoints: [join(SDK_DIR, entry.source)],
    outfile: join(outDir, `${entry.out}.js`),
    bundle: true,
    format: 'esm',
    target: entry.platform === 'node' ? 'node20' : 'es2022',
    platform: entry.platform,
    // Neutral still resolves node_modules packages as ESM; the CLI bundles everything it imports.
    mainFields: ['module', 'main'],
    external: entry.external ?? [],
    legalComments: 'none',
    logLevel: 'silent',
    // esbuild keeps an entry's own hashbang; the banner adds one only where the source has none (never two).
    ...(entry.platform === 'node' && !hasHashbang(entry) ? { banner: { js: '#!/usr/bin/env node' } } : {}),
  };
}

export interface BuildResult {
  built: Entry[];
  missing: Entry[];
}

/** Only the JavaScript bundles (milliseconds): what the browser and size tests load. */
export async function buildBundles(outDir: string, entries: readonly Entry[] = ENTRIES): Promise<BuildResult> {
  const built = entries.filter((e) => existsSync(join(SDK_DIR, e.source)));
  const missing = entries.filter((e) => !built.includes(e));
  await Promise.all(built.map((e) => build(esbuildOptions(e, outDir))));
  for (const e of built.filter((b) => b.platform === 'node')) await chmod(join(outDir, `${e.out}.js`), 0o755);
  return { built, missing };
}

/** The whole package: bundles and declarations into sdk/dist (emptied first). */
export async function buildSdk(outDir = join(SDK_DIR, 'dist')): Promise<BuildResult> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const result = await buildBundles(outDir);
  // The internal router's declarations come from a child process, so that both declaration jobs use a core each.
  const internal = result.built
    .filter((e) => e.types === 'internal')
    .map((e) =>
      promisify(execFile)(process.execPath, [
        join(import.meta.dirname, 'internal-types.ts'),
        join(SDK_DIR, e.source),
        join(outDir, `${e.out}.d.ts`),
      ]),
    );
  const bundled = result.built.filter((e) => e.types === 'bundle');
  const dts = generateDtsBundle(
    bundled.map((e) => ({ filePath: join(SDK_DIR, e.source), output: { noBanner: true, exportReferencedTypes: false } })),
    { preferredConfigPath: join(REPO, 'tsconfig.json') },
  );
  await Promise.all(bundled.map((e, i) => writeFile(join(outDir, `${e.out}.d.ts`), dts[i]!)));
  await Promise.all(internal);
  return result;
}

if (import.meta.main) {
  const started = performance.now();
  const { built, missing } = await buildSdk();
  for (const e of built) console.log(`built ${e.name === 'bin' ? 'bin leadwire' : e.name} -> dist/${e.out}.js`);
  for (const e of missing)
    console.warn(`MISSING ${e.name}: ${relative(REPO, join(SDK_DIR, e.source))} does not exist, so dist/${e.out}.js was not built`);
  console.log(`sdk built in ${Math.round(performance.now() - started)} ms`);
}
