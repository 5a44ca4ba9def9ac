/**
 * The keep-on-failure rule, end to end: a child vitest run over fixture files (one passing, two failing on purpose)
 * on this run's PostgreSQL, given as DATABASE_URL like an external server.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import { withAdmin } from './pg-admin.ts';
import { killLeftovers, ROOT, run } from './process.ts';

const VITEST = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
const CONFIG = 'test/support/fixtures/keep-on-failure/vitest.config.ts';

const adminUrl = inject('pgAdminUrl');
const databases = () =>
  withAdmin(adminUrl, async (c) => (await c.query<{ datname: string }>('select datname from pg_database')).rows.map((r) => r.datname));

let kept: string[] = [];
afterAll(async () => {
  await killLeftovers();
  await withAdmin(adminUrl, async (c) => {
    for (const name of kept) await c.query(`drop database if exists ${c.escapeIdentifier(name)} with (force)`);
  });
});

it("keeps and names the databases of failed files, drops the others and the run's template", { timeout: 60_000 }, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'leadwire-keep-'));
  const recordFile = path.join(dir, 'record.txt');
  try {
    const child = await run(VITEST, ['run', '--config', CONFIG, '--reporter=dot', '--color=false'], {
      DATABASE_URL: adminUrl,
      FIXTURE_RECORD: recordFile,
    });
    const created = Object.fromEntries(
      (await readFile(recordFile, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => l.split(' ')),
    );
    kept = [created.fails, created['inside-fail']].filter((n): n is string => Boolean(n));
    const output = child.stdout + child.stderr;
    expect(child.code, output).toBe(1);
    expect(Object.keys(created).sort()).toEqual(['fails', 'inside-fail', 'inside-pass', 'passes']);

    const left = await databases();
    expect(left).toContain(created.fails);
    expect(left).toContain(created['inside-fail']);
    expect(left).not.toContain(created.passes);
    expect(left).not.toContain(created['inside-pass']);
    const childRun = created.fails!.split('_')[1];
    expect(left).not.toContain(`tpl_${childRun}`);

    // Named where it happened and in the summary, with DATABASE_URL's password masked.
    const shown = (name: string) => `${new URL(adminUrl).host}/${name}`;
    expect(output).toContain(`database ${created.fails} is kept for inspection`);
    expect(output).toMatch(
      new RegExp(`Databases of failed test files, kept for inspection:\\n(  postgres://\\S+\\n)*  \\S+${shown(created.fails)}`),
    );
    expect(output).toContain(shown(created['inside-fail']));
    expect(output).not.toContain(shown(created.passes));
    if (new URL(adminUrl).password) expect(output).not.toContain(`:${new URL(adminUrl).password}@`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
