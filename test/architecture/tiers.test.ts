/**
 * Holds every test file to its tier's rule (test/support/tiers.ts): a file that spawns a process, a cluster or a
 * browser is in `processes`, so `npm run test:quick` never waits on one; a `pure` file opens no database.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/process.ts';
import { selectTiers, testTiers } from '../support/tiers.ts';

/** The names each import statement brings in, per module specifier (type-only imports left out). */
function imports(source: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const m of source.matchAll(/import\s+(?!type\b)([^;]*?)\s+from\s+'([^']+)'/g)) {
    const names = [...m[1]!.matchAll(/\b(?<!type\s)([A-Za-z_$][\w$]*)\b(?!\s+as\b)/g)].map((n) => n[1]!);
    found.set(m[2]!, [...(found.get(m[2]!) ?? []), ...names]);
  }
  return found;
}

/** What starts another process: node:child_process, a server or CLI of support/process.ts, a cluster, a browser. */
function spawns(source: string): string[] {
  const why: string[] = [];
  for (const [from, names] of imports(source)) {
    if (from === 'node:child_process') why.push(from);
    if (/\/chromium\.ts$/.test(from) || /\/pgbouncer\.ts$/.test(from)) why.push(from);
    if (/support\/process\.ts$/.test(from)) why.push(...names.filter((n) => ['startServer', 'run', 'admin', 'freshDataDir'].includes(n)));
    if (names.includes('startEmbeddedPostgres')) why.push('startEmbeddedPostgres');
  }
  return why;
}

/** What opens the run's PostgreSQL: the test app, a test database, the admin connection. */
function opensDatabase(source: string): string[] {
  return [...imports(source).keys()].filter((from) => /support\/(app|db|pg-admin|internal|jobs|receiver)\.ts$/.test(from));
}

describe('test tiers', () => {
  const tiers = testTiers(ROOT);
  const source = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

  it('finds the files of every tier', () => {
    for (const [tier, files] of Object.entries(tiers)) expect(files.length, tier).toBeGreaterThan(10);
    expect(tiers.processes).toContain('test/process/lifecycle.test.ts');
    expect(tiers.pure).toContain('test/architecture/tiers.test.ts');
    expect(tiers.server).toContain('packages/core/src/accounts/service.test.ts');
  });

  it('spawns processes only in the processes tier', () => {
    const misplaced = [...tiers.pure, ...tiers.server]
      .filter((f) => spawns(source(f)).length)
      .map((f) => `${f}: ${spawns(source(f)).join(', ')}`);
    expect(misplaced).toEqual([]);
  });

  it('opens no database in the pure tier', () => {
    const misplaced = tiers.pure.filter((f) => opensDatabase(source(f)).length).map((f) => `${f}: ${opensDatabase(source(f)).join(', ')}`);
    expect(misplaced).toEqual([]);
  });

  it('recognizes what spawns and what opens a database (the rules above can fail)', () => {
    expect(spawns(source('test/process/admin-cli.test.ts')).length).toBeGreaterThan(0);
    expect(spawns(source('test/api/db-stall.test.ts'))).toContain('startEmbeddedPostgres');
    expect(spawns(source('test/docs/links.test.ts'))).toEqual([]);
    expect(opensDatabase(source('packages/core/src/accounts/service.test.ts'))).toEqual(['../../../../test/support/db.ts']);
  });

  it('are chosen by LEADWIRE_TEST_TIERS (npm run test:quick), in run order, all of them when unset; a misspelt one is refused', () => {
    expect(selectTiers(undefined)).toEqual(['processes', 'pure', 'server']);
    expect(selectTiers('')).toEqual(['processes', 'pure', 'server']);
    expect(selectTiers('server, pure')).toEqual(['pure', 'server']);
    expect(() => selectTiers('pure,servers')).toThrow('LEADWIRE_TEST_TIERS names no tier servers: the tiers are processes, pure, server');
    expect(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts['test:quick']).toBe(
      'LEADWIRE_TEST_TIERS=pure,server vitest run',
    );
  });
});
