import * as files from '#core/files/sql.ts';
import * as forms from '#core/forms/sql.ts';
import * as messages from '#core/messages/sql.ts';
import * as pipelines from '#core/pipelines/sql.ts';
import * as tracking from '#core/tracking/sql.ts';
import * as workflows from '#core/workflows/sql.ts';
import { openDb, openOrm, qb, statement, type Db, type MikroORM } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * The statements of pipelines, messages, workflows, forms, files and tracking are typed from the entities, so a
 * misspelt column fails `tsc`; this holds the other half: each one, run by a test or not, is accepted by the migrated
 * schema (PostgreSQL parses and plans it, resolving every column and parameter type, without running it).
 */
const modules = { files, forms, messages, pipelines, tracking, workflows };

const statements = Object.entries(modules).flatMap(([area, mod]) =>
  Object.entries(mod as Record<string, unknown>)
    .filter(([, v]) => typeof v !== 'function')
    .map(([name, v]) => ({ label: `${area}.${name}`, value: v })),
);

const isStatement = (v: unknown): v is { name: string; text: string; slots: unknown[] } =>
  typeof v === 'object' && v !== null && 'text' in v && 'slots' in v;

describe('the statements of the app areas', () => {
  let test: TestDatabase;
  let orm: MikroORM;
  let db: Db;
  beforeAll(async () => {
    test = await createTestDatabase('statements_app', { migrated: true });
    orm = await openOrm(test.url, { pool: { min: 0, max: 1 } });
    db = await openDb(orm);
  });
  afterAll(async () => {
    await orm?.close(true);
    await test?.drop();
  });

  it('are typed statements with named parameters, not SQL text', () => {
    expect(statements.length).toBeGreaterThan(60);
    expect(statements.filter((s) => !isStatement(s.value)).map((s) => s.label)).toEqual([]);
    for (const { value } of statements) {
      if (!isStatement(value)) continue;
      expect(value.text).not.toMatch(/\?/);
    }
  });

  it('are each accepted by the migrated schema', async () => {
    const refused: string[] = [];
    for (const [i, { label, value }] of statements.entries()) {
      if (!isStatement(value)) continue;
      await db
        .raw(`prepare app_area_${i} as ${value.text}`)
        .catch((err: unknown) => refused.push(`${label}: ${err instanceof Error ? err.message : String(err)}`));
    }
    expect(refused).toEqual([]);
  });

  it('would be caught: a misspelt column fails the type check, and the schema refuses it', async () => {
    // @ts-expect-error `nmae` is no column of pipelines
    const misspelt = statement<{ id: string }>()((p) => qb.selectFrom('pipelines').select(['id', 'nmae']).where('id', '=', p.id));
    await expect(db.raw(`prepare app_area_misspelt as ${misspelt.text}`)).rejects.toThrow(/column "nmae" does not exist/);
  });
});
