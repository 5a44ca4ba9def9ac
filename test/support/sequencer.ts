/**
 * The order vitest hands the test files to its workers. Longest first, so that the last files to end are short ones
 * and the run has no tail of one long file beside idle workers: what vitest itself does with the durations it caches
 * from the last run (`node_modules/.vite/vitest`). A fresh clone has no such cache, and vitest then sorts by file size,
 * which put `test/db/feed-plans.test.ts` (its million events) and `test/support/db.test.ts` (PostgreSQL's own 5 s
 * wait) among the last files: on 2 cores a tail of some 5 s of a run with two workers idle. So a file vitest has no
 * duration for takes the one `durations.json` records, from a whole run on the 2-core machine the suite is sized for.
 *
 * A stale or missing entry changes only the order, never an outcome: a file with neither duration runs first, as
 * vitest runs unknown files first. `node test/support/sequencer.ts` writes `durations.json` again from the last run's
 * cache (after a whole `npm test`).
 */
import { globSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { TIERS, type Tier, testTiers, tierOf } from './tiers.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const DURATIONS = join(import.meta.dirname, 'durations.json');

/** A test file as the order sees it. */
export interface Timed {
  tier: Tier;
  /** Relative to the repository root. */
  file: string;
  /** What vitest's cache says of its last run, if anything. */
  cached?: { failed: boolean; duration: number };
}

/**
 * Tier by tier (`processes`, then `pure`, then `server`); within one, the files that failed last time first, then the
 * longest: the cached duration, else the recorded one (ms), else first of all.
 */
export function order<T extends Timed>(files: readonly T[], recorded: Readonly<Record<string, number>>): T[] {
  const failed = (f: T) => f.cached?.failed === true;
  const duration = (f: T) => f.cached?.duration ?? recorded[f.file] ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => {
    if (a.tier !== b.tier) return TIERS.indexOf(a.tier) - TIERS.indexOf(b.tier);
    if (failed(a) !== failed(b)) return failed(a) ? -1 : 1;
    const da = duration(a);
    const db = duration(b);
    return da === db ? 0 : da > db ? -1 : 1;
  });
}

export function readDurations(): Record<string, number> {
  return JSON.parse(readFileSync(DURATIONS, 'utf8')) as Record<string, number>;
}

/** vitest.config.ts's `sequence.sequencer`. */
export class RunSequencer extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = readDurations();
    const timed = specs.map((spec) => {
      const file = relative(ROOT, spec.moduleId);
      return { spec, tier: tierOf(file), file, cached: this.ctx.cache.getTestSpecificationResult(spec) };
    });
    return order(timed, recorded).map((t) => t.spec);
  }
}

/** The durations of vitest's last run, in ms (rounded to 10 ms), of the repository's test files. */
function durationsOfLastRun(): Record<string, number> {
  const caches = globSync('node_modules/.vite/vitest/*/results.json', { cwd: ROOT });
  if (caches.length !== 1) throw new Error(`expected one vitest results cache, found ${caches.length}: ${caches.join(', ')}`);
  const cache = JSON.parse(readFileSync(join(ROOT, caches[0]!), 'utf8')) as {
    projects: Record<string, { files: Record<string, { duration: number }> }>;
  };
  const ran = new Map<string, number>();
  for (const { files } of Object.values(cache.projects)) for (const [file, { duration }] of Object.entries(files)) ran.set(file, duration);
  const out: Record<string, number> = {};
  for (const file of Object.values(testTiers(ROOT)).flat().sort()) {
    const duration = ran.get(file);
    if (duration !== undefined) out[file] = Math.round(duration / 10) * 10;
  }
  return out;
}

if (import.meta.main) {
  const durations = durationsOfLastRun();
  writeFileSync(DURATIONS, `${JSON.stringify(durations, null, 2)}\n`);
  process.stdout.write(`wrote ${Object.keys(durations).length} files' durations to ${relative(ROOT, DURATIONS)}\n`);
}
