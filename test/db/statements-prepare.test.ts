import * as authenticate from '#core/auth/authenticate.ts';
import * as envelope from '#core/auth/envelope-sql.ts';
import * as resolveKey from '#core/auth/resolve-key.ts';
import * as companies from '#core/companies/service.ts';
import * as oneTrip from '#core/contacts/v1/one-trip-sql.ts';
import * as automation from '#core/automation/sql.ts';
import * as capture from '#core/capture/sql.ts';
import * as consent from '#core/consent/sql.ts';
import * as mergeSql from '#core/contacts/app/merge-sql.ts';
import * as contactsApp from '#core/contacts/app/sql.ts';
import * as contactsShared from '#core/contacts/shared/sql.ts';
import * as v1 from '#core/contacts/v1/sql.ts';
import * as files from '#core/files/sql.ts';
import * as forms from '#core/forms/sql.ts';
import * as leads from '#core/leads/service.ts';
import * as messages from '#core/messages/sql.ts';
import * as pipelines from '#core/pipelines/sql.ts';
import * as tracking from '#core/tracking/sql.ts';
import * as endpoints from '#core/webhooks/endpoints/sql.ts';
import * as workflows from '#core/workflows/sql.ts';
import { openDb, openOrm, qb, statement, type Db, type MikroORM } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * Statements are typed from the entities, so a misspelt column fails `tsc`; this holds the other half: every exported
 * statement of the modules that keep their SQL in one place (the contact upsert hot path among them), run by a test or
 * not, is accepted by the migrated schema (PostgreSQL parses and plans it, resolving every column and parameter type,
 * without running it). Module-private statements run in the tests of their areas.
 */
const modules = {
  authenticate,
  envelope,
  resolveKey,
  companies,
  oneTrip,
  automation,
  capture,
  consent,
  mergeSql,
  contactsApp,
  contactsShared,
  v1,
  leads,
  files,
  forms,
  messages,
  pipelines,
  tracking,
  endpoints,
  workflows,
};
/** The modules that export only statements (and functions): any other constant there is SQL text left behind. */
const STATEMENTS_ONLY = ['files', 'forms', 'messages', 'pipelines', 'tracking', 'workflows', 'v1'];

const isStatement = (v: unknown): v is { name: string; text: string; slots: unknown[] } =>
  typeof v === 'object' && v !== null && 'text' in v && 'slots' in v;

const exported = Object.entries(modules).flatMap(([area, mod]) =>
  Object.entries(mod as Record<string, unknown>)
    .filter(([, v]) => typeof v !== 'function')
    .map(([name, value]) => ({ area, label: `${area}.${name}`, value })),
);
const statements = [
  ...exported.flatMap(({ label, value }) => (isStatement(value) ? [{ label, text: value.text }] : [])),
  ...(['notes', 'messages', 'tracked_links'] as const).map((t) => ({ label: `mergeSql.move(${t})`, text: mergeSql.move(t).text })),
];

describe('the exported statements', () => {
  let test: TestDatabase;
  let orm: MikroORM;
  let db: Db;
  beforeAll(async () => {
    test = await createTestDatabase('statements', { migrated: true });
    orm = await openOrm(test.url, { pool: { min: 0, max: 1 } });
    db = await openDb(orm);
  });
  afterAll(async () => {
    await orm?.close(true);
    await test?.drop();
  });

  it('are typed statements with named parameters, not SQL text', () => {
    expect(statements.length).toBeGreaterThan(100);
    const leftover = exported.filter((e) => STATEMENTS_ONLY.includes(e.area) && !isStatement(e.value)).map((e) => e.label);
    expect(leftover).toEqual([]);
    for (const { text } of statements) expect(text).not.toMatch(/\?/);
  });

  it('are each accepted by the migrated schema', async () => {
    const refused: string[] = [];
    for (const [i, { label, text }] of statements.entries()) {
      await db
        .raw(`prepare exported_${i} as ${text}`)
        .catch((err: unknown) => refused.push(`${label}: ${err instanceof Error ? err.message : String(err)}`));
    }
    expect(refused).toEqual([]);
  });

  it('would be caught: a misspelt column fails the type check, and the schema refuses it', async () => {
    // @ts-expect-error `nmae` is no column of pipelines
    const misspelt = statement<{ id: string }>()((p) => qb.selectFrom('pipelines').select(['id', 'nmae']).where('id', '=', p.id));
    await expect(db.raw(`prepare misspelt as ${misspelt.text}`)).rejects.toThrow(/column "nmae" does not exist/);
  });
});
