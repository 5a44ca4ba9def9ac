import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXCEPTIONS, folderEdges, loops, twoWayPairs, withoutExceptions } from './folders.ts';

/*
 * The layers of .dependency-cruiser.js (its header draws them): no circle, no import from a lower layer up, apps/
 * through the packages' named exports, the SDK and the snippets apart; and, folded to folders (folders.ts), no two
 * folders importing each other and no loop of folders. `npm run deps` prints the same reports.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let result: ICruiseResult;

beforeAll(async () => {
  const options = await extractDepcruiseOptions(`${ROOT}.dependency-cruiser.js`);
  const tsConfig = extractTSConfig(`${ROOT}tsconfig.json`);
  // baseDir: the rules' paths are relative to the repository root, as the command line sees them.
  const cruised = await cruise(['packages', 'apps', 'sdk', 'snippets'], { ...options, baseDir: ROOT, validate: true }, {}, { tsConfig });
  result = cruised.output as ICruiseResult;
});

describe('the dependency graph', () => {
  it('has no circle and no import against the layers', () => {
    const violations = result.summary.violations.map((v) =>
      v.cycle?.length ? `${v.rule.name}: ${v.from} -> ${v.cycle.map((c) => c.name).join(' -> ')}` : `${v.rule.name}: ${v.from} -> ${v.to}`,
    );
    expect(violations).toEqual([]);
  });

  it('resolves every import of our own modules (a rule cannot judge an import it could not follow)', () => {
    const unresolved = result.modules.flatMap((m) =>
      m.dependencies.filter((d) => d.couldNotResolve && !d.coreModule && d.module.startsWith('.')).map((d) => `${m.source} -> ${d.module}`),
    );
    expect(unresolved).toEqual([]);
    // The graph really holds the tree (a wrong root or exclusion would make every rule pass on nothing).
    expect(result.summary.totalCruised).toBeGreaterThan(300);
  });
});

describe('the tree folded to folders', () => {
  it('has no two folders that import each other', () => {
    // Each pair with the file imports both ways, so the failure says what to move.
    const pairs = twoWayPairs(withoutExceptions(folderEdges(result))).map(({ pair, imports }) => `${pair}: ${imports.join(', ')}`);
    expect(pairs).toEqual([]);
  });

  it('has no loop of folders: each folder stands above everything it imports', () => {
    expect(loops(withoutExceptions(folderEdges(result)))).toEqual([]);
    // The fold found the folders (a wrong path prefix would fold everything away and pass on nothing).
    expect([...folderEdges(result).keys()]).toEqual(
      expect.arrayContaining(['contacts', 'webhooks', 'auth', 'context', 'openapi', 'errors']),
    );
  });

  it('allows at most 5 exceptions, each still needed and explained in docs/architecture.md', () => {
    const edges = folderEdges(result);
    const docs = readFileSync(`${ROOT}docs/architecture.md`, 'utf8');
    expect(Object.keys(EXCEPTIONS).length).toBeLessThanOrEqual(5);
    for (const exception of Object.keys(EXCEPTIONS)) {
      const [from, to] = exception.split(' -> ') as [string, string];
      expect(edges.get(from)?.has(to), `${exception} is no longer imported: drop the exception`).toBe(true);
      expect(docs, `docs/architecture.md explains ${exception}`).toContain(`\`${exception}\``);
    }
  });
});

describe('package exports', () => {
  for (const pkg of ['core', 'db']) {
    it(`@leadwire/${pkg} names each subpath it exports (no wildcard into its source)`, () => {
      const { exports } = JSON.parse(readFileSync(`${ROOT}packages/${pkg}/package.json`, 'utf8')) as { exports: Record<string, string> };
      expect(Object.keys(exports).filter((k) => k.includes('*'))).toEqual([]);
      expect(exports['.']).toBe('./src/index.ts');
    });
  }
});
