import * as authenticate from '#core/auth/authenticate.ts';
import * as automation from '#core/automation/sql.ts';
import * as capture from '#core/capture/sql.ts';
import * as mergeSql from '#core/contacts/app/merge-sql.ts';
import * as app from '#core/contacts/app/sql.ts';
import * as shared from '#core/contacts/shared/sql.ts';
import * as v1 from '#core/contacts/v1/sql.ts';
import * as leads from '#core/leads/service.ts';
import { openDb, openOrm, type Db, type MikroORM } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * The statements of contacts (the upsert hot path among them), leads, capture, authentication and automation are typed
 * from the entities, so a misspelt column fails `tsc`; this holds the other half: each exported one, run by a test or
 * not, is accepted by the migrated schema (PostgreSQL parses and plans it, resolving every column and parameter type,
 * without running it). The module-private ones (purge, timeline, score adjustment, idempotency, sessions, API keys)
 * run in the tests of their areas.
 */
const modules = { authenticate, automation, capture, mergeSql, app, shared, v1, leads };

const isStatement = (v: unknown): v is { name: string; text: string; slots: unknown[] } =>
  typeof v === 'object' && v !== null && 'text' in v && 'slots' in v;

const statements = [
  ...Object.entries(modules).flatMap(([area, mod]) =>
    Object.entries(mod as Record<string, unknown>)
      .filter(([, v]) => isStatement(v))
      .map(([name, v]) => ({ label: `${area}.${name}`, value: v as { text: string } })),
  ),
  ...(['notes', 'messages', 'tracked_links'] as const).map((t) => ({ label: `mergeSql.move(${t})`, value: mergeSql.move(t) })),
];

describe('the statements of the contact areas', () => {
  let test: TestDatabase;
  let orm: MikroORM;
  let db: Db;
  beforeAll(async () => {
    test = await createTestDatabase('statements_contacts', { migrated: true });
    orm = await openOrm(test.url, { pool: { min: 0, max: 1 } });
    db = await openDb(orm);
  });
  afterAll(async () => {
    await orm?.close(true);
    await test?.drop();
  });

  it('are typed statements with named parameters, not SQL text', () => {
    expect(statements.length).toBeGreaterThan(35);
    for (const { value } of statements) expect(value.text).not.toMatch(/\?/);
    // The upsert path's module exports no SQL text at all.
    expect(Object.keys(v1).filter((k) => typeof (v1 as Record<string, unknown>)[k] === 'string')).toEqual([]);
  });

  it('are each accepted by the migrated schema', async () => {
    const refused: string[] = [];
    for (const [i, { label, value }] of statements.entries()) {
      await db
        .raw(`prepare contact_area_${i} as ${value.text}`)
        .catch((err: unknown) => refused.push(`${label}: ${err instanceof Error ? err.message : String(err)}`));
    }
    expect(refused).toEqual([]);
  });
});
