/**
 * Spec "Authentication" 1-8 over real HTTP: who gets 401, 403 wrong_api_surface and 403 insufficient_scope, that
 * revocation, expiry, deactivation and credential changes bite on the very next request (in another server process
 * too), and that no response ever carries a key value.
 */
import { generateKeyValue, hashKey } from '@leadwire/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { killLeftovers, type ServerProcess, startServer } from '../support/process.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

/** Every key value this file handles; no response may contain one (nor its random part). */
const secrets = new Set<string>();
const remember = (key: string) => (secrets.add(key), key);

type Res = Awaited<ReturnType<typeof call>>;

/** `call` plus the check that nothing secret came back, in the body or in any header. */
async function req(app: TestApp, method: string, path: string, opts: Parameters<typeof call>[3] = {}): Promise<Res> {
  const r = await call(app, method, path, opts);
  const text = `${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}\n${[...r.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}`;
  for (const s of secrets) {
    expect(text).not.toContain(s);
    expect(text).not.toContain(s.slice('ck_live_'.length));
  }
  return r;
}

function expectError(r: Res, status: number, code: string, extra: Record<string, unknown> = {}) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(r.body).sort()).toEqual(['code', 'error', ...Object.keys(extra)].sort());
  expect(r.body.code).toBe(code);
  expect(typeof r.body.error).toBe('string');
  expect(r.body.error.length).toBeGreaterThan(0);
  expect(r.body).toMatchObject(extra);
}

const expectUnauthorized = (r: Res) => expectError(r, 401, 'unauthorized');

async function keyId(value: string): Promise<string> {
  const [row] = await t.sql<{ id: string }>('select id from api_keys where key_hash = ?', [hashKey(value)]);
  if (!row) throw new Error('key not found');
  return row.id;
}

async function newOrg() {
  const org = await t.newOrg();
  remember(org.publicKey);
  remember(org.internalKey);
  return org;
}

const searchAs = (key: string, app: TestApp = t) => req(app, 'GET', '/contacts/search?email=nobody@example.com', { key });
/** A request that only a working key with contacts:read gets through: 404 not_found means "authenticated". */
async function expectWorks(key: string, app: TestApp = t) {
  const r = await searchAs(key, app);
  expect(r.status, JSON.stringify(r.body)).toBe(404);
  expect(r.body.code).toBe('not_found');
}

describe('401 unauthorized', () => {
  it('refuses a request without an Authorization header', async () => {
    expectUnauthorized(await req(t, 'GET', '/contacts/search?email=a@b.com'));
    expectUnauthorized(await req(t, 'POST', '/contacts/upsert', { body: { email: 'a@b.com' } }));
  });

  it('refuses schemes other than Bearer, and a bare key', async () => {
    const { publicKey } = await newOrg();
    const basic = Buffer.from(`${publicKey}:`).toString('base64');
    for (const authorization of [
      `Basic ${basic}`,
      `Token ${publicKey}`,
      publicKey,
      `Bearer`,
      `Bearer ${publicKey} extra`,
      `Bearer: ${publicKey}`,
    ]) {
      expectUnauthorized(await req(t, 'GET', '/contacts/search?email=a@b.com', { headers: { authorization } }));
    }
    // The key in another header or in the query string is not a credential on /v1.
    expectUnauthorized(await req(t, 'GET', '/contacts/search?email=a@b.com', { headers: { 'x-api-key': publicKey } }));
    expectUnauthorized(await req(t, 'GET', `/contacts/search?email=a@b.com&api_key=${publicKey}`));
    await expectWorks(publicKey);
  });

  it('refuses malformed keys without echoing them', async () => {
    const { publicKey } = await newOrg();
    const malformed = [
      'abc',
      'ck_live_',
      publicKey.slice(0, -1),
      `${publicKey}x`,
      publicKey.replace('ck_live_', 'ck_test_'),
      `${publicKey.slice(0, -1)}-`,
    ];
    for (const bad of malformed) {
      const r = await req(t, 'GET', '/contacts/search?email=a@b.com', { key: bad });
      expectUnauthorized(r);
      if (bad.length > 8) expect(JSON.stringify(r.body)).not.toContain(bad);
    }
  });

  it('refuses a well-formed key that was never issued', async () => {
    const unknown = remember(generateKeyValue());
    expectUnauthorized(await req(t, 'GET', '/contacts/search?email=a@b.com', { key: unknown }));
    expectUnauthorized(await req(t, 'POST', '/contacts/upsert', { key: unknown, body: { email: 'ghost@example.com' } }));
    expect(await t.sql(`select 1 from contacts where email = 'ghost@example.com'`)).toHaveLength(0);
  });

  it('refuses a revoked key on the very next request, and only that key', async () => {
    const org = await newOrg();
    const second = remember(
      await t.newKey({
        orgId: org.orgId,
        userId: org.userId,
        name: 'second',
        type: 'public',
        permissions: ['contacts:read', 'contacts:write'],
      }),
    );
    await expectWorks(org.publicKey);
    await expectWorks(second);

    await t.sql('update api_keys set revoked_at = now() where id = ?', [await keyId(org.publicKey)]);
    expectUnauthorized(await searchAs(org.publicKey));
    expectUnauthorized(await req(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'after-revoke@example.com' } }));
    expect(await t.sql(`select 1 from contacts where email = 'after-revoke@example.com'`)).toHaveLength(0);
    await expectWorks(second);
  });

  it('refuses an expired key: created expired, or expiring while in use', async () => {
    const org = await newOrg();
    const expired = remember(
      await t.newKey({
        orgId: org.orgId,
        userId: org.userId,
        name: 'old',
        type: 'public',
        permissions: ['contacts:read'],
        expiresAt: new Date(Date.now() - 1000),
      }),
    );
    expectUnauthorized(await searchAs(expired));

    const expiring = remember(
      await t.newKey({
        orgId: org.orgId,
        userId: org.userId,
        name: 'soon',
        type: 'public',
        permissions: ['contacts:read'],
        expiresAt: new Date(Date.now() + 3_600_000),
      }),
    );
    await expectWorks(expiring);
    await t.sql(`update api_keys set expires_at = now() - interval '1 second' where id = ?`, [await keyId(expiring)]);
    expectUnauthorized(await searchAs(expiring));
  });

  it('stops every key of a deactivated owner at once, but not the keys of other users', async () => {
    const org = await newOrg();
    const [colleague] = await t.sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role) values (?, ?, 'not-a-real-hash', 'member') returning id`,
      [org.orgId, `colleague-${Date.now()}@example.com`],
    );
    const colleagueKey = remember(
      await t.newKey({ orgId: org.orgId, userId: colleague!.id, name: 'colleague', type: 'public', permissions: ['contacts:read'] }),
    );
    await expectWorks(org.publicKey);

    await t.sql('update users set active = false where id = ?', [org.userId]);
    expectUnauthorized(await searchAs(org.publicKey));
    // Deactivation wins over the surface check: a dead Internal key is unauthorized, not "wrong surface".
    expectUnauthorized(await searchAs(org.internalKey));
    await expectWorks(colleagueKey);
  });

  it('stops keys when the owner changes or resets the password or logs out of all devices (credential epoch)', async () => {
    const org = await newOrg();
    await expectWorks(org.publicKey);
    await t.sql('update users set credential_epoch = credential_epoch + 1 where id = ?', [org.userId]);
    expectUnauthorized(await searchAs(org.publicKey));
    expectUnauthorized(await req(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'after-epoch@example.com' } }));
    expect(await t.sql(`select 1 from contacts where email = 'after-epoch@example.com'`)).toHaveLength(0);

    // A key issued after the change works: the check compares epochs, it does not just refuse everyone.
    const fresh = remember(
      await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'fresh', type: 'public', permissions: ['contacts:read'] }),
    );
    await expectWorks(fresh);
    await t.sql('update users set credential_epoch = credential_epoch + 1 where id = ?', [org.userId]);
    expectUnauthorized(await searchAs(fresh));
  });

  it('checks the key before the body: an anonymous caller learns nothing about validation', async () => {
    expectUnauthorized(await req(t, 'POST', '/contacts/upsert', { body: { email: 'not-an-email', tags: 'x' } }));
    expectUnauthorized(await req(t, 'GET', '/contacts/search'));
    expectUnauthorized(await req(t, 'POST', '/contacts/not-a-uuid/notes', { body: {} }));
  });
});

describe('revocation across server processes on one database', { timeout: 60_000 }, () => {
  let server: ServerProcess;
  let peer: TestApp;
  beforeAll(async () => {
    // A real second process (the server entry point) on the same database: it shares nothing in memory with this one.
    server = await startServer({ DATABASE_URL: t.runtime.deps.config.DATABASE_URL!, ROLE: 'api', LOG_LEVEL: 'warn' });
    await server.waitReady();
    peer = { ...t, origin: server.origin, v1: `${server.origin}/api/v1` };
  });
  afterAll(async () => {
    await server?.stop();
    await killLeftovers();
  });

  it('a key revoked while both processes use it is refused by both on the next request', async () => {
    const org = await newOrg();
    // Both processes have seen and accepted the key, so a per-process cache would now hold it.
    await expectWorks(org.publicKey, t);
    await expectWorks(org.publicKey, peer);

    await t.sql('update api_keys set revoked_at = now() where id = ?', [await keyId(org.publicKey)]);
    expectUnauthorized(await searchAs(org.publicKey, t));
    expectUnauthorized(await searchAs(org.publicKey, peer));
  });

  it('an owner deactivated or re-credentialed is refused by the other process at once', async () => {
    const a = await newOrg();
    const b = await newOrg();
    for (const org of [a, b]) {
      await expectWorks(org.publicKey, t);
      await expectWorks(org.publicKey, peer);
    }
    await t.sql('update users set active = false where id = ?', [a.userId]);
    await t.sql('update users set credential_epoch = credential_epoch + 1 where id = ?', [b.userId]);
    expectUnauthorized(await searchAs(a.publicKey, peer));
    expectUnauthorized(await searchAs(b.publicKey, peer));
  });
});

describe('403 wrong_api_surface', () => {
  it('refuses an Internal key on every /v1 endpoint, writing nothing', async () => {
    const { internalKey, publicKey } = await newOrg();
    const contact = await req(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email: 'surface@example.com' } });
    expect(contact.status).toBe(200);
    const attempts: [string, string, unknown][] = [
      ['GET', '/contacts/search?email=surface@example.com', undefined],
      ['POST', '/contacts/upsert', { email: 'internal@example.com' }],
      ['POST', '/contacts/batch-upsert', { contacts: [{ email: 'internal@example.com' }] }],
      ['POST', `/contacts/${contact.body.id}/notes`, { body: 'from an internal key' }],
      ['POST', '/companies/upsert', { domain: 'internal.example' }],
      ['POST', '/leads', { email: 'internal@example.com' }],
    ];
    for (const [method, path, body] of attempts) {
      expectError(await req(t, method, path, { key: internalKey, body }), 403, 'wrong_api_surface');
    }
    expect(await t.sql(`select 1 from contacts where email = 'internal@example.com'`)).toHaveLength(0);
    expect(await t.sql(`select 1 from companies where domain = 'internal.example'`)).toHaveLength(0);
    expect(await t.sql('select 1 from notes where contact_id = ?', [contact.body.id])).toHaveLength(0);
  });
});

describe('403 insufficient_scope', () => {
  const ALL = ['contacts:read', 'contacts:write', 'companies:write', 'leads:write', 'notes:write'] as const;
  type Permission = (typeof ALL)[number];
  let org: Awaited<ReturnType<typeof newOrg>>;
  let contactId: string;
  beforeAll(async () => {
    org = await newOrg();
    const r = await req(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'scoped@example.com' } });
    contactId = r.body.id;
  });
  // Undo each case's successful writes so that the "writes nothing" checks of the next case stay meaningful.
  afterEach(async () => {
    await t.sql(`delete from contacts where organization_id = ? and email <> 'scoped@example.com'`, [org.orgId]);
    await t.sql('delete from companies where organization_id = ?', [org.orgId]);
    await t.sql('delete from notes where organization_id = ?', [org.orgId]);
  });

  const keyWith = async (permissions: readonly Permission[]) =>
    remember(await t.newKey({ orgId: org.orgId, userId: org.userId, name: permissions.join(' ') || 'none', type: 'public', permissions }));

  /** The requests each permission guards, each with a valid body, and the row it would have written. */
  const guarded = (): Record<Permission, { method: string; path: string; body?: unknown; wrote?: () => Promise<unknown[]> }[]> => ({
    'contacts:read': [{ method: 'GET', path: '/contacts/search?email=scoped@example.com' }],
    'contacts:write': [
      {
        method: 'POST',
        path: '/contacts/upsert',
        body: { email: 'scope-upsert@example.com' },
        wrote: () => t.sql(`select 1 from contacts where email = 'scope-upsert@example.com'`),
      },
      {
        method: 'POST',
        path: '/contacts/batch-upsert',
        body: { contacts: [{ email: 'scope-batch@example.com' }] },
        wrote: () => t.sql(`select 1 from contacts where email = 'scope-batch@example.com'`),
      },
    ],
    'companies:write': [
      {
        method: 'POST',
        path: '/companies/upsert',
        body: { domain: 'scope.example' },
        wrote: () => t.sql(`select 1 from companies where domain = 'scope.example'`),
      },
    ],
    'leads:write': [
      {
        method: 'POST',
        path: '/leads',
        body: { email: 'scope-lead@example.com' },
        wrote: () => t.sql(`select 1 from contacts where email = 'scope-lead@example.com'`),
      },
    ],
    'notes:write': [
      {
        method: 'POST',
        path: `/contacts/${contactId}/notes`,
        body: { body: 'scoped note' },
        wrote: () => t.sql(`select 1 from notes where body = 'scoped note'`),
      },
    ],
  });

  for (const permission of ALL) {
    it(`a key without ${permission} gets 403 naming it in required, and writes nothing`, async () => {
      const key = await keyWith(ALL.filter((p) => p !== permission));
      for (const g of guarded()[permission]) {
        expectError(await req(t, g.method, g.path, { key, body: g.body }), 403, 'insufficient_scope', { required: permission });
        if (g.wrote) expect(await g.wrote()).toHaveLength(0);
      }
      // The same key is otherwise fine: one of the permissions it does hold works.
      const other = ALL.find((p) => p !== permission)!;
      const ok = guarded()[other][0]!;
      const r = await req(t, ok.method, ok.path, { key, body: ok.body });
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    });

    it(`a key holding only ${permission} may do exactly that`, async () => {
      const key = await keyWith([permission]);
      const g = guarded()[permission][0]!;
      const r = await req(t, g.method, g.path, { key, body: g.body });
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      for (const other of ALL.filter((p) => p !== permission)) {
        const o = guarded()[other][0]!;
        expectError(await req(t, o.method, o.path, { key, body: o.body }), 403, 'insufficient_scope', { required: other });
      }
    });
  }

  it('a key with no permissions is refused everywhere', async () => {
    const key = await keyWith([]);
    for (const [permission, requests] of Object.entries(guarded())) {
      for (const g of requests) {
        expectError(await req(t, g.method, g.path, { key, body: g.body }), 403, 'insufficient_scope', { required: permission });
      }
    }
  });

  it('checks the scope before the body', async () => {
    const key = await keyWith(['contacts:read']);
    expectError(await req(t, 'POST', '/contacts/upsert', { key, body: { email: 'not-an-email' } }), 403, 'insufficient_scope', {
      required: 'contacts:write',
    });
  });
});
