import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ICruiseResult } from 'dependency-cruiser';

/*
 * The tree folded to folders: dependency-cruiser judges modules, but the layers are about folders (a folder that
 * imports another while the other imports it back is one unit split in two, whatever its files do). Each module of
 * packages/core/src folds to its first folder (contacts/v1/router.ts -> contacts); a top-level file folds to its own
 * name, and so joins the folder of that name (errors.ts -> errors, beside errors/; context.ts -> context). packages/db
 * is one folder, and so is each application, the SDK and the snippets.
 */
const CORE = 'packages/core/src/';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The TypeScript sources under `dir` (from the repository root) that production runs: tests and their helpers left out. */
export function productionSources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter(
      (f) => f.isFile() && /\.tsx?$/.test(f.name) && !/\.test(-d|-support)?\.ts$/.test(f.name) && !f.parentPath.includes('node_modules'),
    )
    .map((f) => path.relative(ROOT, path.join(f.parentPath, f.name)));
}

export function folderOf(source: string): string | undefined {
  if (source.startsWith(CORE)) {
    const rest = source.slice(CORE.length);
    const slash = rest.indexOf('/');
    if (slash >= 0) return rest.slice(0, slash);
    return rest.replace(/\.tsx?$/, '');
  }
  if (source.startsWith('packages/db/')) return 'db';
  const outer = /^(apps\/[^/]+|sdk|snippets)\//.exec(source);
  return outer?.[1];
}

/**
 * Imports of one folder by another that the layers allow although the other imports it back, or closes a loop: at
 * most 5, each keyed `from -> to` (folders) with its reason, and each explained in docs/architecture.md ("Exceptions").
 * None today.
 */
export const EXCEPTIONS: Readonly<Record<string, string>> = {};

/** One folder importing another: the file imports behind it, `from -> to` each. */
export type FolderEdges = Map<string, Map<string, string[]>>;

export function folderEdges(result: ICruiseResult): FolderEdges {
  const edges: FolderEdges = new Map();
  for (const module of result.modules) {
    const from = folderOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (!to || to === from) continue;
      const targets = edges.get(from) ?? new Map<string, string[]>();
      edges.set(from, targets);
      targets.set(to, [...(targets.get(to) ?? []), `${module.source} -> ${dependency.resolved}`]);
    }
  }
  return edges;
}

/** The folder graph without the imports EXCEPTIONS allows. */
export function withoutExceptions(edges: FolderEdges): FolderEdges {
  const kept: FolderEdges = new Map();
  for (const [from, targets] of edges) {
    kept.set(from, new Map([...targets].filter(([to]) => !(`${from} -> ${to}` in EXCEPTIONS))));
  }
  return kept;
}

/** Pairs of folders that import each other, `a <-> b` (a before b), with the imports each way. */
export function twoWayPairs(edges: FolderEdges): { pair: string; imports: string[] }[] {
  const pairs: { pair: string; imports: string[] }[] = [];
  for (const [a, targets] of edges) {
    for (const [b, there] of targets) {
      const back = edges.get(b)?.get(a);
      if (a < b && back) pairs.push({ pair: `${a} <-> ${b}`, imports: [...there, ...back] });
    }
  }
  return pairs.sort((x, y) => x.pair.localeCompare(y.pair));
}

/** The strongly connected groups of two or more folders (Tarjan): folders tied into one loop. */
export function loops(edges: FolderEdges): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return groups;
}

/**
 * The building: folders on floors, each above everything it imports, and the file imports that run back up. With
 * loops there is no such building; the floors are then the order that leaves the fewest imports running up (a
 * greedy order (Eades, Lin and Smyth) improved by moving one folder at a time; with no loop it is exact and 0).
 */
export function building(edges: FolderEdges): { order: string[]; upward: string[] } {
  const folders = [...new Set([...edges.keys(), ...[...edges.values()].flatMap((t) => [...t.keys()])])].sort();
  const weight = (a: string, b: string): number => edges.get(a)?.get(b)?.length ?? 0;
  // Greedy: take sinks to the bottom, sources to the top, otherwise the folder most imported minus importing.
  const left = new Set(folders);
  const bottom: string[] = [];
  const top: string[] = [];
  const out = (v: string): number => [...left].reduce((n, w) => n + (w === v ? 0 : weight(v, w)), 0);
  const into = (v: string): number => [...left].reduce((n, w) => n + (w === v ? 0 : weight(w, v)), 0);
  while (left.size > 0) {
    const sink = [...left].find((v) => out(v) === 0);
    if (sink) {
      bottom.push(sink);
      left.delete(sink);
      continue;
    }
    const source = [...left].find((v) => into(v) === 0);
    if (source) {
      top.unshift(source);
      left.delete(source);
      continue;
    }
    const best = [...left].sort((a, b) => into(b) - out(b) - (into(a) - out(a)))[0]!;
    bottom.push(best);
    left.delete(best);
  }
  // order[0] is the ground floor; an import from floor i to floor j > i runs up.
  let order = [...bottom, ...top.reverse()];
  const cost = (o: string[]): number => {
    const floor = new Map(o.map((v, i) => [v, i]));
    let n = 0;
    for (const [a, targets] of edges) for (const [b, imports] of targets) if (floor.get(b)! > floor.get(a)!) n += imports.length;
    return n;
  };
  for (let improved = true; improved; ) {
    improved = false;
    for (let i = 0; i < order.length; i += 1) {
      for (let j = 0; j < order.length; j += 1) {
        if (i === j) continue;
        const moved = [...order];
        const [v] = moved.splice(i, 1);
        moved.splice(j, 0, v!);
        if (cost(moved) < cost(order)) {
          order = moved;
          improved = true;
        }
      }
    }
  }
  const floor = new Map(order.map((v, i) => [v, i]));
  const upward: string[] = [];
  for (const [a, targets] of edges) for (const [b, imports] of targets) if (floor.get(b)! > floor.get(a)!) upward.push(...imports);
  return { order, upward: upward.sort() };
}

/** The floors of the building: a folder stands one floor above the highest folder it imports (imports up ignored). */
export function floors(edges: FolderEdges): string[][] {
  const { order } = building(edges);
  const level = new Map<string, number>();
  for (const v of order) {
    const below = [...(edges.get(v)?.keys() ?? [])].filter((w) => level.has(w));
    level.set(v, below.length ? Math.max(...below.map((w) => level.get(w)!)) + 1 : 0);
  }
  const result: string[][] = [];
  for (const [v, n] of level) (result[n] ??= []).push(v);
  return result.map((f) => f.sort());
}
