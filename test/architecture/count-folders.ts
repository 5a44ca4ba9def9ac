/**
 * `node test/architecture/count-folders.ts`: the tree folded to folders (folders.ts), counted: pairs of folders that
 * import each other, loops of folders, and the file imports that run up the best building of floors. The before and
 * after figures of issue 26 (docs/architecture.md) are this script's output; layers.test.ts holds the same figures.
 */
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { building, folderEdges, loops, twoWayPairs } from './folders.ts';

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
process.stdout.write(`floors, ground first: ${order.join(' < ')}\n`);
