/**
 * `node test/architecture/count-folders.ts [--verbose]` (also the second half of `npm run deps`): the tree folded to
 * folders (folders.ts), counted: pairs of folders that import each other, loops of folders, the file imports that run
 * up the best building of floors, and the floors. The before and after figures in docs/architecture.md are its output.
 * Exits 1 when a pair or a loop remains beside the allowed exceptions, as layers.test.ts fails then.
 */
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { building, EXCEPTIONS, floors, folderEdges, loops, twoWayPairs, withoutExceptions } from './folders.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const options = await extractDepcruiseOptions(`${ROOT}.dependency-cruiser.js`);
const tsConfig = extractTSConfig(`${ROOT}tsconfig.json`);
const cruised = await cruise(['packages', 'apps', 'sdk', 'snippets'], { ...options, baseDir: ROOT }, {}, { tsConfig });
const edges = folderEdges(cruised.output as ICruiseResult);
const verbose = process.argv.includes('--verbose');

const pairs = twoWayPairs(edges);
process.stdout.write(`folder pairs that import each other: ${pairs.length}\n`);
for (const { pair, imports } of pairs) {
  process.stdout.write(`  ${pair} (${imports.length} imports)\n`);
  if (verbose) for (const line of imports) process.stdout.write(`      ${line}\n`);
}
const groups = loops(edges);
process.stdout.write(`loops of folders: ${groups.length}${groups.map((g) => `\n  ${g.length} folders: ${g.join(' ')}`).join('')}\n`);
const { order, upward } = building(edges);
process.stdout.write(`imports running up the floors: ${upward.length}\n`);
for (const line of upward) process.stdout.write(`  ${line}\n`);
process.stdout.write(`order, ground first: ${order.join(' < ')}\n`);
process.stdout.write(
  `floors, top first:\n${floors(edges)
    .map((f, i) => `  ${String(i).padStart(2)}  ${f.join(' ')}`)
    .reverse()
    .join('\n')}\n`,
);

const allowed = withoutExceptions(edges);
const left = twoWayPairs(allowed).length + loops(allowed).length;
process.stdout.write(
  `${Object.keys(EXCEPTIONS).length} allowed exceptions; ${left ? `${left} pairs and loops beside them: FAILED` : 'the folders import one way'}\n`,
);
process.exitCode = left ? 1 : 0;
