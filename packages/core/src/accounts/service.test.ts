import { createHash } from 'node:crypto';
import { migrateUp, type MikroORM, openDb, openOrm, type PgDb, PUBLIC_PERMISSIONS } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/db.ts';
import { isWellFormedKey } from '../auth/key-material.ts';
import { AppError } from '../errors.ts';
import { bootstrap, createApiKey, DEFAULT_PIPELINE, type NewApiKey } from './service.ts';

let db: TestDatabase;
let orm: MikroORM;
let pg: PgDb;
beforeAll(async () => {
  db = await createTestDatabase('accounts');
  orm = await openOrm(db.url, { pool: { min: 0, max: 4 } });
  await migrateUp(orm);
  pg = await openDb(orm);
});
afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
});

const PASSWORD = 'correct horse battery staple';
let seq = 0;
const uniqueEmail = () => `owner${++seq}-${Math.random().toString(36).slice(2, 8)}@example.com`;

/** Unprepared (raw), so an assertion may read whole rows with `select *`, which the executor refuses for the app. */
async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  let n = 0;
  return (
    await pg.raw(
      query.replace(/\?/g, () => `$${++n}`),
      params,
    )
  ).rows as T[];
}

async function count(table: string): Promise<number> {
  const [row] = await sql<{ n: string }>(`select count(*) as n from ${table}`);
  return Number(row?.n);
}

/** The AppError a call is refused with, checked to be one. */
async function refusal(call: Promise<unknown>): Promise<AppError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('bootstrap', () => {
  it('creates the organization, its owner, the default pipeline with ordered stages, and two keys', async () => {
    const email = uniqueEmail();
    const out = await bootstrap(pg, { name: 'Acme', ownerEmail: ` ${email.toUpperCase()} `, ownerPassword: PASSWORD, plan: 'pro' });

    expect(isWellFormedKey(out.publicKey)).toBe(true);
    expect(isWellFormedKey(out.internalKey)).toBe(true);
    expect(out.publicKey).not.toBe(out.internalKey);

    expect(await sql('select name, plan from organizations where id = ?', [out.orgId])).toEqual([{ name: 'Acme', plan: 'pro' }]);
    const [owner] = await sql<any>('select organization_id, email, role, active, password_hash from users where id = ?', [out.userId]);
    expect(owner).toMatchObject({ organization_id: out.orgId, email, role: 'owner', active: true });
    expect(owner.password_hash).toMatch(/^scrypt\$/);
    expect(owner.password_hash).not.toContain(PASSWORD);

    const pipelines = await sql<any>('select id, name, is_default from pipelines where organization_id = ?', [out.orgId]);
    expect(pipelines).toEqual([{ id: expect.any(String), name: DEFAULT_PIPELINE.name, is_default: true }]);
    const stages = await sql<any>('select name, position, organization_id from pipeline_stages where pipeline_id = ? order by position', [
      pipelines[0].id,
    ]);
    expect(stages.map((s) => s.name)).toEqual(['New', 'Contacted', 'Qualified', 'Proposal', 'Won', 'Lost']);
    expect(stages.map((s) => s.position)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(stages.every((s) => s.organization_id === out.orgId)).toBe(true);

    const keys = await sql<any>('select type, permissions, created_by_id from api_keys where organization_id = ? order by type desc', [
      out.orgId,
    ]);
    expect(keys).toEqual([
      { type: 'public', permissions: [...PUBLIC_PERMISSIONS], created_by_id: out.userId },
      { type: 'internal', permissions: [], created_by_id: out.userId },
    ]);
  });

  it('defaults to the starter plan', async () => {
    const out = await bootstrap(pg, { name: 'Small', ownerEmail: uniqueEmail(), ownerPassword: PASSWORD });
    expect(await sql('select plan from organizations where id = ?', [out.orgId])).toEqual([{ plan: 'starter' }]);
  });

  it('refuses an owner email already taken, whatever its case, and leaves nothing behind', async () => {
    const email = uniqueEmail();
    await bootstrap(pg, { name: 'First', ownerEmail: email, ownerPassword: PASSWORD });
    const before = await Promise.all(['organizations', 'users', 'pipelines', 'pipeline_stages', 'api_keys'].map(count));

    const err = await refusal(bootstrap(pg, { name: 'Second', ownerEmail: ` ${email.toUpperCase()}`, ownerPassword: PASSWORD }));
    expect(err).toMatchObject({ status: 409, code: 'email_taken' });

    expect(await Promise.all(['organizations', 'users', 'pipelines', 'pipeline_stages', 'api_keys'].map(count))).toEqual(before);
    expect(await sql(`select 1 from organizations where name = 'Second'`)).toEqual([]);
  });
});

describe('createApiKey', () => {
  let org: Awaited<ReturnType<typeof bootstrap>>;
  let other: Awaited<ReturnType<typeof bootstrap>>;
  beforeAll(async () => {
    org = await bootstrap(pg, { name: 'Keys', ownerEmail: uniqueEmail(), ownerPassword: PASSWORD });
    other = await bootstrap(pg, { name: 'Other', ownerEmail: uniqueEmail(), ownerPassword: PASSWORD });
  });

  const input = (overrides: Partial<NewApiKey> = {}): NewApiKey => ({
    orgId: org.orgId,
    userId: org.userId,
    name: 'Test key',
    type: 'public',
    permissions: ['contacts:read'],
    ...overrides,
  });

  async function keysOf(orgId: string): Promise<number> {
    const [row] = await sql<{ n: string }>('select count(*) as n from api_keys where organization_id = ?', [orgId]);
    return Number(row?.n);
  }

  it('stores only the sha256 of the value and a display prefix, never the value', async () => {
    const { id, value } = await createApiKey(pg, input({ permissions: ['contacts:write', 'contacts:read', 'contacts:write'] }));
    expect(isWellFormedKey(value)).toBe(true);

    const [row] = await sql<any>('select * from api_keys where id = ?', [id]);
    expect(row.key_hash).toBe(createHash('sha256').update(value).digest('hex'));
    expect(row.display_prefix).toBe(value.slice(0, 'ck_live_'.length + 6));
    expect(row).toMatchObject({ name: 'Test key', type: 'public', permissions: ['contacts:write', 'contacts:read'], revoked_at: null });
    // No column, under any name, holds the value or its secret part.
    const secretPart = value.slice('ck_live_'.length);
    for (const [column, stored] of Object.entries(row)) {
      expect(JSON.stringify(stored) ?? '', column).not.toContain(secretPart.slice(6));
    }
  });

  it('creates an internal key without permissions', async () => {
    const { id } = await createApiKey(pg, input({ type: 'internal', permissions: [] }));
    expect(await sql('select type, permissions from api_keys where id = ?', [id])).toEqual([{ type: 'internal', permissions: [] }]);
  });

  it('refuses an unknown permission', async () => {
    const before = await keysOf(org.orgId);
    const err = await refusal(createApiKey(pg, input({ permissions: ['contacts:read', 'contacts:delete'] })));
    expect(err).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(JSON.stringify(err.details)).toContain('contacts:delete');
    expect(await keysOf(org.orgId)).toBe(before);
  });

  it('refuses permissions on an internal key', async () => {
    const before = await keysOf(org.orgId);
    const err = await refusal(createApiKey(pg, input({ type: 'internal', permissions: ['contacts:read'] })));
    expect(err).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(await keysOf(org.orgId)).toBe(before);
  });

  it('refuses a deactivated user', async () => {
    const email = uniqueEmail();
    const [member] = await sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role, active) values (?, ?, 'x', 'member', false) returning id`,
      [org.orgId, email],
    );
    const before = await keysOf(org.orgId);
    const err = await refusal(createApiKey(pg, input({ userId: member!.id })));
    expect(err).toMatchObject({ status: 409, code: 'user_inactive' });
    expect(await keysOf(org.orgId)).toBe(before);
  });

  it('refuses a user of another organization, and an unknown user', async () => {
    const before = [await keysOf(org.orgId), await keysOf(other.orgId)];
    expect(await refusal(createApiKey(pg, input({ userId: other.userId })))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(createApiKey(pg, input({ userId: crypto.randomUUID() })))).toMatchObject({ status: 404, code: 'not_found' });
    expect([await keysOf(org.orgId), await keysOf(other.orgId)]).toEqual(before);
  });
});
