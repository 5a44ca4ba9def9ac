/**
 * The docs hold together: every relative link of README.md, docs/*.md and the snippets' ARCHITECTURE.md reaches an
 * existing file and heading, every path a code map or the text names exists, every docs file is reachable from the
 * README's reading order, and the configuration table lists every setting.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '#core/config.ts';
import { ROOT } from '../support/process.ts';
import { anchors, docsFiles, readingOrder, relativeLinks, shellSteps } from './markdown.ts';

/**
 * Whether a node-semver range (the forms `engines` fields use: `>=x.y`, `^x`, `x.*`, `||`, comparators joined by
 * spaces) admits `version`; a comparator it cannot read counts as admitting, so the check errs towards silence.
 */
function admits(range: string, version: number[]): boolean {
  const at = (v: string) =>
    v
      .split('.')
      .filter((p) => /^\d+$/.test(p))
      .map(Number);
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
    return 0;
  };
  const one = (c: string): boolean => {
    const m = /^(>=|<=|>|<|\^|~|=)?v?(\d+(?:\.[\dx*]+)*)$/.exec(c);
    if (!m) return true;
    const [, op = '', v = ''] = m;
    const bound = at(v);
    const d = cmp(version, bound);
    if (op === '>=') return d >= 0;
    if (op === '>') return d > 0;
    if (op === '<=') return d <= 0;
    if (op === '<') return d < 0;
    if (op === '^' || op === '~') return d >= 0 && version[0] === bound[0] && (op === '^' || version[1] === bound[1]);
    // x, x.y, x.* : the parts given must match.
    return bound.every((part, i) => version[i] === part);
  };
  return range.split('||').some((alt) =>
    alt
      .trim()
      .replace(/(>=|<=|>|<|\^|~|=)\s+/g, '$1')
      .split(/\s+/)
      .filter((c) => c && c !== '*')
      .every(one),
  );
}

const snippetMaps = () =>
  readdirSync(path.join(ROOT, 'snippets'))
    .map((d) => `snippets/${d}/ARCHITECTURE.md`)
    .filter((f) => existsSync(path.join(ROOT, f)));
const FILES = ['README.md', ...docsFiles(), ...snippetMaps()];
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const exists = (p: string) => existsSync(path.join(ROOT, p));

/** The paths of a tree-shaped code map (a fenced block): indented entries are inside the nearest folder above them. */
export function treePaths(block: string): string[] {
  const out: string[] = [];
  const parents: { indent: number; dir: string }[] = [];
  for (const line of block.split('\n')) {
    const m = /^( *)(\S+(?: \S+\/)*)/.exec(line);
    if (!m) continue;
    const tokens = m[2]!.split(' ');
    if (!/^[\w.@-]+(\/[\w.@-]+)*\/?$/.test(tokens[0]!) || !/\/$|\.\w+$/.test(tokens[0]!)) continue;
    const indent = m[1]!.length;
    while (parents.length && parents.at(-1)!.indent >= indent) parents.pop();
    const base = parents.at(-1)?.dir ?? '';
    for (const t of tokens) out.push(base + t);
    if (tokens.length === 1 && tokens[0]!.endsWith('/')) parents.push({ indent, dir: base + tokens[0]! });
  }
  return out;
}

/** Paths the prose names from the repository's root, in backticks (`packages/db/src/bounded.ts`). */
const ROOTS = /^(apps|packages|test|snippets|sdk|migrations|docs)\/[\w./@-]*$/;
const namedPaths = (text: string) =>
  [...text.matchAll(/`([^`\s]+)`/g)]
    .map((m) => m[1]!.replace(/[:,]$/, ''))
    .filter((p) => ROOTS.test(p) && !p.includes('<') && !p.includes('*'));

describe('the docs hold together', () => {
  it.each(FILES)('every relative link of %s reaches a file and heading', (file) => {
    const broken: string[] = [];
    for (const { target, line } of relativeLinks(file)) {
      const [to, anchor] = target.split('#') as [string, string | undefined];
      const dest = to ? path.normalize(path.join(path.dirname(file), to)) : file;
      if (!exists(dest)) broken.push(`${file}:${line} -> ${target}: no such file`);
      else if (anchor && dest.endsWith('.md') && !anchors(dest).has(anchor)) broken.push(`${file}:${line} -> ${target}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  it("every path in docs/architecture.md's code map exists", () => {
    const map = read('docs/architecture.md').split('\n## Code map\n')[1]!.split('```')[1]!;
    const paths = treePaths(map);
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((p) => !exists(p))).toEqual([]);
  });

  it("docs/architecture.md's code map names every package and every folder of packages/core/src and sdk/src", () => {
    const paths = treePaths(read('docs/architecture.md').split('\n## Code map\n')[1]!.split('```')[1]!);
    const folders = (dir: string) =>
      readdirSync(path.join(ROOT, dir), { withFileTypes: true })
        .filter((d) => d.isDirectory() && !['node_modules', 'dist', 'test', 'assets'].includes(d.name))
        .map((d) => `${dir}/${d.name}/`);
    const wanted = ['apps', 'packages', 'packages/core/src', 'sdk/src', 'snippets'].flatMap(folders);
    expect(wanted.filter((f) => !paths.some((p) => p.startsWith(f)))).toEqual([]);
  });

  it.each(snippetMaps())("every file in %s's code map exists", (file) => {
    const table = read(file).split('\n## Code map\n')[1]!.split('\n## ')[0]!;
    const named = [...table.matchAll(/^\| (.+?) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!));
    expect(named.length).toBeGreaterThan(3);
    expect(named.filter((p) => !exists(path.join(path.dirname(file), p)))).toEqual([]);
  });

  it.each(FILES)('every repository path %s names exists', (file) => {
    // A snippet's ARCHITECTURE.md names its own files from its folder.
    const found = (p: string) => exists(p) || (file.startsWith('snippets/') && exists(path.join(path.dirname(file), p)));
    expect(namedPaths(read(file)).filter((p) => !found(p))).toEqual([]);
  });

  it('the README explains the one kind of warning `npm ci` prints where the system Node is 20 (issue 28)', () => {
    // npm judges every package's `engines` by the Node it runs on; the scripts run on the Node 24 npm ci installs.
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: unknown; optional?: boolean }> };
    const wantNewer = Object.entries(lock.packages)
      .filter(([, p]) => !p.optional && typeof p.engines === 'object' && p.engines !== null && 'node' in p.engines)
      .filter(([, p]) => !admits(String((p.engines as { node: unknown }).node), [20, 17, 0]))
      .map(([name]) => name || 'the root package');
    expect(wantNewer.length).toBeGreaterThan(0);
    const quickStart = read('README.md').split('\n## Quick start\n')[1]?.split('\n## ')[0] ?? '';
    expect(quickStart, `npm ci on Node 20 warns EBADENGINE for ${wantNewer.join(', ')}`).toContain('`EBADENGINE`');
    expect(read('docs/operating.md')).toContain('`npm warn EBADENGINE`');
  });

  it('the README stays a front door: at most 200 lines, the rest in docs/', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(200);
  });

  it("the README's reading order reaches every docs file, and every example marker is one the examples test reads", () => {
    expect(new Set(readingOrder())).toEqual(new Set(['README.md', ...docsFiles()]));
    for (const file of FILES) {
      // Shell blocks run here (or say why not); a JavaScript block marked `run` is an SDK example that
      // sdk/test/pack.test.ts runs against the packed SDK.
      const markers = read(file).match(/^<!-- example:.*-->(\n```\w*)?/gm) ?? [];
      expect(
        markers.filter((m) => !/^<!-- example: not run: .+ -->\n```\w*$/.test(m) && !/^<!-- example: run -->\n```js$/.test(m)),
        file,
      ).toEqual([]);
      shellSteps(file);
    }
  });

  it("docs/operating.md's configuration table lists exactly the settings config.ts parses", () => {
    const table = read('docs/operating.md').split('\n## Configuration\n')[1]!;
    const listed = [...table.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]!);
    expect(listed.toSorted()).toEqual(Object.keys(ConfigSchema.in.shape).toSorted());
  });

  it('finds what it checks: a broken path, link or map entry fails', () => {
    // Folders side by side on one line are siblings; an indented entry is inside the folder above it.
    expect(
      treePaths('apps/server/   x\n  src/main.ts   y\n  src/nope.ts   z\npackages/db/\n  src/ nope/   w').filter((p) => !exists(p)),
    ).toEqual(['apps/server/src/nope.ts', 'packages/db/nope/']);
    expect(namedPaths('see `packages/db/src/nope.ts`, `limits/key-guard.ts` and `apps/server/src/main.ts`')).toEqual([
      'packages/db/src/nope.ts',
      'apps/server/src/main.ts',
    ]);
  });
});
