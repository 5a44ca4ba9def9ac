/**
 * Builds `@leadwire/sdk` into sdk/dist: one ESM bundle per entry point (esbuild) and one bundled declaration file per
 * library entry (dts-bundle-generator; the internal entry's router type is the committed sdk/src/generated/
 * internal-router.ts, made by `npm run sdk:generate`, so nothing here reads the server's types). Run by `npm pack` and
 * `npm publish` (prepack), or as `node sdk/scripts/build.ts`. ENTRIES is the one list of what the package holds:
 * sdk/package.json's exports and bin must match it (the pack test checks), and an entry whose source does not exist
 * yet is reported as missing, never skipped in silence.
 *
 * With `--if-stale` (prepack, and the pack test) it builds only when sdk/dist is not the build of the sources as they
 * are now: a stamp records a hash of every input (the SDK's sources and scripts, tsconfig and the lock file) and of
 * every file written, so a test run (or a pack) after an unchanged build reuses it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
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
  /** How its declarations are made: bundled from the sources, or none (the CLI). */
  types: 'bundle' | 'none';
  /** Imports left to the installing application (peer dependencies). */
  external?: string[];
}

export const ENTRIES: readonly Entry[] = [
  { name: '.', source: 'src/index.ts', out: 'index', platform: 'neutral', types: 'bundle' },
  { name: './webhooks', source: 'src/webhooks.ts', out: 'webhooks', platform: 'neutral', types: 'bundle' },
  { name: './internal', source: 'src/internal.ts', out: 'internal', platform: 'neutral', types: 'bundle', external: ['@trpc/client'] },
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
  const bundled = result.built.filter((e) => e.types === 'bundle');
  const dts = generateDtsBundle(
    bundled.map((e) => ({ filePath: join(SDK_DIR, e.source), output: { noBanner: true, exportReferencedTypes: false } })),
    { preferredConfigPath: join(REPO, 'tsconfig.json') },
  );
  await Promise.all(bundled.map((e, i) => writeFile(join(outDir, `${e.out}.d.ts`), dts[i]!)));
  return result;
}

/** The files whose content decides what the build writes (see the header). */
export const INPUT_DIRS = ['sdk/src', 'sdk/scripts'];
export const INPUT_FILES = ['sdk/package.json', 'tsconfig.json', 'package.json', 'package-lock.json'];
/** The stamp of the last complete build: outside dist/, which the package ships as it is. */
export const BUILD_STAMP = join(REPO, 'node_modules', '.cache', 'leadwire-sdk', 'build-stamp.json');

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

/** One hash of every input file's path and content (`root` is the repository; a test passes a copy). */
export async function inputsHash(root = REPO): Promise<string> {
  const files = [...(await Promise.all(INPUT_DIRS.map((d) => filesUnder(join(root, d))))).flat(), ...INPUT_FILES.map((f) => join(root, f))]
    .map((f) => relative(root, f))
    .sort();
  const hash = createHash('sha256');
  for (const f of files) hash.update(`${f}\0${sha256(await readFile(join(root, f)))}\0`);
  return hash.digest('hex');
}

/** Each file of `outDir` with its content's hash. */
async function outputsOf(outDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of (await filesUnder(outDir)).sort()) out[relative(outDir, f)] = sha256(await readFile(f));
  return out;
}

interface Stamp {
  inputs: string;
  outputs: Record<string, string>;
}

/** Whether `outDir` (sdk/dist) is exactly what the last build of the current inputs wrote. */
export async function upToDate(outDir = join(SDK_DIR, 'dist')): Promise<boolean> {
  if (!existsSync(BUILD_STAMP) || !existsSync(outDir)) return false;
  const stamp = JSON.parse(await readFile(BUILD_STAMP, 'utf8')) as Stamp;
  const [inputs, outputs] = await Promise.all([inputsHash(), outputsOf(outDir)]);
  return stamp.inputs === inputs && JSON.stringify(stamp.outputs) === JSON.stringify(outputs);
}

/** Builds sdk/dist unless it is already the build of the current inputs; records the stamp after a complete build. */
export async function buildIfStale(): Promise<{ reused: boolean; result?: BuildResult }> {
  const outDir = join(SDK_DIR, 'dist');
  if (await upToDate(outDir)) return { reused: true };
  await rm(BUILD_STAMP, { force: true });
  const inputs = await inputsHash();
  const result = await buildSdk(outDir);
  // A build with a missing entry is not the package: it is never reused.
  if (result.missing.length === 0) {
    await mkdir(dirname(BUILD_STAMP), { recursive: true });
    await writeFile(BUILD_STAMP, JSON.stringify({ inputs, outputs: await outputsOf(outDir) } satisfies Stamp));
  }
  return { reused: false, result };
}

if (import.meta.main) {
  const started = performance.now();
  if (process.argv.includes('--if-stale')) {
    const { reused, result } = await buildIfStale();
    if (reused) {
      console.log(`sdk/dist is up to date with its sources (checked in ${Math.round(performance.now() - started)} ms)`);
      process.exit(0);
    }
    report(result!);
  } else report(await buildSdk());
  console.log(`sdk built in ${Math.round(performance.now() - started)} ms`);
}

function report({ built, missing }: BuildResult) {
  for (const e of built) console.log(`built ${e.name === 'bin' ? 'bin leadwire' : e.name} -> dist/${e.out}.js`);
  for (const e of missing)
    console.warn(`MISSING ${e.name}: ${relative(REPO, join(SDK_DIR, e.source))} does not exist, so dist/${e.out}.js was not built`);
}
