import { describe, expect, it } from 'vitest';
import { order, readDurations, type Timed } from './sequencer.ts';
import { testTiers } from './tiers.ts';

const names = (files: Timed[]) => files.map((f) => `${f.tier}:${f.file}`);

describe('the order of the test files', () => {
  it('without vitest’s cache (a fresh clone): tier by tier, the longest recorded first, a file never recorded before all', () => {
    const recorded = { 'a.test.ts': 1_000, 'b.test.ts': 9_000, 'c.test.ts': 5_000, 'd.test.ts': 20_000 };
    const files: Timed[] = [
      { tier: 'server', file: 'a.test.ts' },
      { tier: 'server', file: 'new.test.ts' },
      { tier: 'processes', file: 'c.test.ts' },
      { tier: 'server', file: 'b.test.ts' },
      { tier: 'pure', file: 'd.test.ts' },
      { tier: 'processes', file: 'a2.test.ts' },
    ];
    expect(names(order(files, recorded))).toEqual([
      'processes:a2.test.ts',
      'processes:c.test.ts',
      'pure:d.test.ts',
      'server:new.test.ts',
      'server:b.test.ts',
      'server:a.test.ts',
    ]);
  });

  it('with it: the last run’s durations win over the recorded ones, and a file that failed last time runs first', () => {
    const recorded = { 'a.test.ts': 1_000, 'b.test.ts': 9_000, 'c.test.ts': 5_000 };
    const files: Timed[] = [
      { tier: 'server', file: 'a.test.ts', cached: { failed: false, duration: 30_000 } },
      { tier: 'server', file: 'b.test.ts', cached: { failed: false, duration: 2_000 } },
      { tier: 'server', file: 'c.test.ts', cached: { failed: true, duration: 100 } },
      { tier: 'server', file: 'd.test.ts' },
    ];
    expect(names(order(files, recorded))).toEqual(['server:c.test.ts', 'server:d.test.ts', 'server:a.test.ts', 'server:b.test.ts']);
  });

  it('durations.json records the test files of the repository (refreshed by `node test/support/sequencer.ts`)', () => {
    const recorded = readDurations();
    const files = new Set(Object.values(testTiers(process.cwd())).flat());
    expect(Object.keys(recorded).filter((f) => !files.has(f))).toEqual([]);
    expect(Object.values(recorded).every((ms) => Number.isInteger(ms) && ms >= 0)).toBe(true);
    // Most of them: a file missing runs first, which is harmless for a few and would undo the order for many.
    expect(Object.keys(recorded).length).toBeGreaterThan(files.size * 0.8);
  });
});
