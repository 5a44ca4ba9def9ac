/**
 * Spec "API key" and "Authentication" 5-8 in the application: creating a key needs a fresh password confirmation on
 * the session, the value is shown once and only its hash is stored, the key works on its own surface at once, the list
 * never shows a secret, members see and revoke only their own keys, and no tenant reaches another's keys.
 */
import { randomBytes } from 'node:crypto';
import { hashKey, type InternalRouter } from '@leadwire/core';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());
// Tests that move the server's clock put it back, so the next test starts at the wall clock's time.
afterEach(() => {
  t.clock.unfreeze();
  t.clock.set(new Date());
});
const DAY_MS = 86_400_000;

const client = (token: string) =>
  createTRPCClient<InternalRouter>({ links: [httpLink({ url: `${t.origin}/api/trpc`, headers: { authorization: `Bearer ${token}` } })] });

/** REST under /api; JSON in, JSON out. The REST adapter wants a JSON body on every POST, `{}` when there is nothing to say. */
async function rest(method: string, path: string, token?: string, body: unknown = method === 'POST' ? {} : undefined) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${t.origin}/api${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** The `{ error, code }` body a typed call was refused with, and its status. */
async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the call should have been refused').toBeInstanceOf(TRPCClientError);
  const data = (err as TRPCClientError<InternalRouter>).data as { httpStatus: number; body: { code: string } };
  return { status: data.httpStatus, code: data.body.code };
}

/**
 * A session token for a user, made the way sign-in stores one (hashed, with the user's credential epoch). `unlocked`
 * sets key_creation_unlocked_until that many seconds from now (negative: already past), as the password confirmation does.
 * Times are the server clock's.
 */
async function session(userId: string, unlocked?: number): Promise<string> {
  const token = `lws_${randomBytes(32).toString('base64url')}`;
  await t.sql(
    `insert into sessions (organization_id, user_id, token_hash, user_epoch, expires_at, key_creation_unlocked_until)
     select organization_id, id, ?, credential_epoch, ?::timestamptz + interval '1 day',
       case when ?::int is null then null else ?::timestamptz + make_interval(secs => ?::int) end
     from users where id = ?`,
    [hashKey(token), t.clock.now(), unlocked ?? null, t.clock.now(), unlocked ?? null, userId],
  );
  return token;
}

async function addUser(orgId: string, role: 'admin' | 'member'): Promise<{ id: string; email: string }> {
  const email = `${role}-${randomBytes(6).toString('hex')}@example.com`;
  const [row] = await t.sql<{ id: string }>(
    `insert into users (organization_id, email, password_hash, role) values (?, ?, 'not-a-real-hash', ?) returning id`,
    [orgId, email, role],
  );
  return { id: row!.id, email };
}

/** An organization with an owner, an admin and two members, each with a session unlocked for key creation. */
async function team() {
  const org = await t.newOrg();
  const [ownerRow] = await t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
  const owner = { id: org.userId, email: ownerRow!.email };
  const admin = await addUser(org.orgId, 'admin');
  const m1 = await addUser(org.orgId, 'member');
  const m2 = await addUser(org.orgId, 'member');
  const [so, sa, s1, s2] = await Promise.all([owner, admin, m1, m2].map((u) => session(u.id, 300)));
  return { org, owner: { ...owner, s: so! }, admin: { ...admin, s: sa! }, m1: { ...m1, s: s1! }, m2: { ...m2, s: s2! } };
}

const keysIn = async (orgId: string) =>
  Number((await t.sql<{ n: string }>('select count(*) as n from api_keys where organization_id = ?', [orgId]))[0]!.n);
const me = (token: string) => rest('GET', '/me', token);
const v1Search = (key: string) => call(t, 'GET', '/contacts/search?email=nobody@example.com', { key });

describe('security confirmation', () => {
  it('refuses creation without a confirmation, after it expired, on another session, and with an Internal key', async () => {
    const org = await t.newOrg();
    const input = { name: 'ci', type: 'internal' as const };
    const never = await session(org.userId);
    const expired = await session(org.userId, -1);
    const unlocked = await session(org.userId, 300);
    const before = await keysIn(org.orgId);

    expect(await refusal(client(never).apiKeys.create.mutate(input))).toEqual({ status: 403, code: 'confirmation_required' });
    expect(await refusal(client(expired).apiKeys.create.mutate(input))).toEqual({ status: 403, code: 'confirmation_required' });
    // An Internal key cannot re-enter a password, even while its user has an unlocked session elsewhere.
    expect(await refusal(client(org.internalKey).apiKeys.create.mutate(input))).toEqual({ status: 403, code: 'confirmation_required' });
    const r = await rest('POST', '/api-keys', never, input);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: expect.any(String), code: 'confirmation_required', requestId: r.headers.get('x-request-id') });
    expect(await keysIn(org.orgId)).toBe(before);

    // The unlock belongs to one session and lasts: two keys in a row within the window.
    await client(unlocked).apiKeys.create.mutate(input);
    await client(unlocked).apiKeys.create.mutate({ name: 'second', type: 'public', permissions: ['contacts:read'] });
    expect(await keysIn(org.orgId)).toBe(before + 2);
    await t.sql(`update sessions set key_creation_unlocked_until = now() - interval '1 second' where token_hash = ?`, [hashKey(unlocked)]);
    expect(await refusal(client(unlocked).apiKeys.create.mutate(input))).toEqual({ status: 403, code: 'confirmation_required' });
  });

  it('is given by re-entering the password with accounts.confirmPassword', async () => {
    const org = await t.newOrg();
    const s = await session(org.userId);
    const input = { name: 'after confirming', type: 'internal' as const };
    expect(await refusal(client(s).apiKeys.create.mutate(input))).toEqual({ status: 403, code: 'confirmation_required' });
    // The password newOrg() gives its owner (test/support/app.ts).
    await client(s).accounts.confirmPassword.mutate({ password: 'correct horse battery staple' });
    const key = await client(s).apiKeys.create.mutate(input);
    expect((await me(key.value)).status).toBe(200);
  });
});

describe('creating keys', () => {
  it('returns a Public key once, with only the permissions ticked, working on /v1 at once; only its hash is stored', async () => {
    const org = await t.newOrg();
    const s = await session(org.userId, 300);
    const r = await rest('POST', '/api-keys', s, { name: 'Zapier', type: 'public', permissions: ['contacts:read', 'notes:write'] });
    expect(r.status).toBe(201);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const key = r.body;
    expect(key.value).toMatch(/^ck_live_[0-9A-Za-z]{43}$/);
    expect(key).toMatchObject({
      name: 'Zapier',
      type: 'public',
      permissions: ['contacts:read', 'notes:write'],
      displayPrefix: key.value.slice(0, 14),
      status: 'active',
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
      createdBy: { id: org.userId },
    });

    expect((await v1Search(key.value)).body.code).toBe('not_found'); // authenticated, found nothing
    const write = await call(t, 'POST', '/contacts/upsert', { key: key.value, body: { email: 'x@example.com' } });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ code: 'insufficient_scope', required: 'contacts:write' });
    expect((await me(key.value)).body.code).toBe('wrong_api_surface');

    const [row] = await t.sql('select * from api_keys where id = ?', [key.id]);
    expect(row!.key_hash).toBe(hashKey(key.value));
    expect(JSON.stringify(row)).not.toContain(key.value.slice(8));

    // Shown once: the list, through either client, never carries the value or the hash.
    const listed = JSON.stringify([await client(s).apiKeys.list.query(), (await rest('GET', '/api-keys', s)).body]);
    expect(listed).toContain(key.id);
    expect(listed).not.toContain(key.value.slice(8));
    expect(listed).not.toContain(hashKey(key.value));
    expect(listed).not.toMatch(/"value"|key_?hash/i);
  });

  it('gives an Internal key the reach of the user who made it, and nothing on /v1', async () => {
    const { org, m1 } = await team();
    const key = await client(m1.s).apiKeys.create.mutate({ name: 'script', type: 'internal' });
    expect(key).toMatchObject({ type: 'internal', permissions: [], createdBy: { id: m1.id, email: m1.email } });
    // The key acts as its creator: me answers the creator's email and name too.
    expect((await me(key.value)).body).toEqual({
      userId: m1.id,
      orgId: org.orgId,
      email: m1.email,
      name: null,
      role: 'member',
      via: 'internal_key',
    });
    expect((await v1Search(key.value)).body.code).toBe('wrong_api_surface');
    // Acting as a member, it manages only that member's keys.
    expect((await client(key.value).apiKeys.list.query()).keys.map((k) => k.id)).toEqual([key.id]);
  });

  it('validates type, permissions, name and expiry', async () => {
    const org = await t.newOrg();
    const s = await session(org.userId, 300);
    const before = await keysIn(org.orgId);
    const bad = [
      { name: 'x', type: 'public' },
      { name: 'x', type: 'public', permissions: [] },
      { name: 'x', type: 'public', permissions: ['contacts:delete'] },
      { name: 'x', type: 'internal', permissions: ['contacts:read'] },
      { name: 'x', type: 'webhook' },
      { name: '  ', type: 'internal' },
      { name: 'x', type: 'internal', expiresInDays: 0 },
      { name: 'x', type: 'internal', expiresInDays: 3651 },
      { name: 'x', type: 'internal', expiresInDays: 1.5 },
    ];
    for (const body of bad) {
      const r = await rest('POST', '/api-keys', s, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    expect(await keysIn(org.orgId)).toBe(before);
  });

  it('expires a key after the days chosen, by the server clock', async () => {
    const org = await t.newOrg();
    t.clock.freeze();
    const createdAt = t.clock.now();
    const s = await session(org.userId, 300);
    const key = await client(s).apiKeys.create.mutate({ name: 'temp', type: 'internal', expiresInDays: 30 });
    expect(key.expiresAt).toBe(new Date(createdAt.getTime() + 30 * DAY_MS).toISOString());
    expect((await me(key.value)).status).toBe(200);

    // A fresh session each time: the first one, a day long, is long gone 30 days on.
    const status = async () => (await client(await session(org.userId)).apiKeys.list.query()).keys.find((k) => k.id === key.id)?.status;
    t.clock.advance(30 * DAY_MS - 1);
    expect(await status()).toBe('active');
    t.clock.advance(1);
    expect(await status()).toBe('expired');

    await t.sql(`update api_keys set expires_at = ?::timestamptz - interval '1 second' where id = ?`, [createdAt, key.id]);
    expect((await me(key.value)).body.code).toBe('unauthorized');
  });
});

describe('listing', () => {
  it('shows owners and admins every key of the organization, members only their own, nobody another tenant\u2019s', async () => {
    const { org, owner, admin, m1, m2 } = await team();
    const other = await team();
    const made = {
      owner: await client(owner.s).apiKeys.create.mutate({ name: 'owner key', type: 'internal' }),
      admin: await client(admin.s).apiKeys.create.mutate({ name: 'admin key', type: 'public', permissions: ['leads:write'] }),
      m1: await client(m1.s).apiKeys.create.mutate({ name: 'm1 key', type: 'internal' }),
      m2: await client(m2.s).apiKeys.create.mutate({ name: 'm2 key', type: 'public', permissions: ['contacts:read'] }),
    };
    await client(other.m1.s).apiKeys.create.mutate({ name: 'foreign', type: 'internal' });
    const all = (await t.sql<{ id: string }>('select id from api_keys where organization_id = ?', [org.orgId])).map((r) => r.id).sort();
    expect(all).toHaveLength(6); // the two bootstrap keys and the four above

    const ids = async (token: string) => (await client(token).apiKeys.list.query()).keys.map((k) => k.id).sort();
    expect(await ids(owner.s)).toEqual(all);
    expect(await ids(admin.s)).toEqual(all);
    expect(await ids(org.internalKey)).toEqual(all);
    expect(await ids(m1.s)).toEqual([made.m1.id]);
    expect(await ids(m2.s)).toEqual([made.m2.id]);

    const { keys } = (await rest('GET', '/api-keys', admin.s)).body;
    expect(keys.find((k: any) => k.id === made.m2.id)).toEqual({
      id: made.m2.id,
      name: 'm2 key',
      type: 'public',
      permissions: ['contacts:read'],
      displayPrefix: made.m2.value.slice(0, 14),
      status: 'active',
      createdAt: made.m2.createdAt,
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
      createdBy: { id: m2.id, email: m2.email },
    });
  });

  it('records when a key was last used, and shows a key stopped by its creator\u2019s credential change', async () => {
    const { m1 } = await team();
    const key = await client(m1.s).apiKeys.create.mutate({ name: 'used', type: 'internal' });
    const before = Date.now();
    await me(key.value);
    const used = (await client(m1.s).apiKeys.list.query()).keys[0]!;
    expect(Date.parse(used.lastUsedAt!)).toBeGreaterThanOrEqual(before - 1000);

    // "Log out of all devices" moves the epoch: the key dies, and the list says so (read through a fresh session).
    await t.sql('update users set credential_epoch = credential_epoch + 1 where id = ?', [m1.id]);
    expect((await me(key.value)).status).toBe(401);
    const fresh = await session(m1.id);
    expect((await client(fresh).apiKeys.list.query()).keys[0]).toMatchObject({ id: key.id, status: 'stopped' });
  });
});

describe('revoking', () => {
  it('stops the key on the very next request; revoking again changes nothing', async () => {
    const { m1 } = await team();
    const key = await client(m1.s).apiKeys.create.mutate({ name: 'soon gone', type: 'public', permissions: ['contacts:read'] });
    expect((await v1Search(key.value)).status).toBe(404);
    const revoked = await client(m1.s).apiKeys.revoke.mutate({ id: key.id });
    expect(revoked).toMatchObject({ id: key.id, status: 'revoked', revokedAt: expect.any(String) });
    expect(revoked).not.toHaveProperty('value');
    expect((await v1Search(key.value)).body.code).toBe('unauthorized');

    const again = await rest('POST', `/api-keys/${key.id}/revoke`, m1.s);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(revoked);
  });

  it('lets an Internal key revoke itself', async () => {
    const org = await t.newOrg();
    const [row] = await t.sql<{ id: string }>('select id from api_keys where key_hash = ?', [hashKey(org.internalKey)]);
    await client(org.internalKey).apiKeys.revoke.mutate({ id: row!.id });
    expect((await me(org.internalKey)).body.code).toBe('unauthorized');
  });

  it('lets members revoke only their own keys; owners and admins revoke any key of the organization', async () => {
    const { owner, admin, m1, m2 } = await team();
    const mk = (s: string, name: string) => client(s).apiKeys.create.mutate({ name, type: 'internal' });
    const [ownerKey, adminKey, m2Key, m2Other] = [
      await mk(owner.s, 'o'),
      await mk(admin.s, 'a'),
      await mk(m2.s, 'm2'),
      await mk(m2.s, 'm2b'),
    ];

    for (const target of [ownerKey, adminKey, m2Key]) {
      expect(await refusal(client(m1.s).apiKeys.revoke.mutate({ id: target.id }))).toEqual({ status: 404, code: 'not_found' });
      expect((await me(target.value)).status, 'still working').toBe(200);
    }
    expect((await rest('POST', `/api-keys/${m2Key.id}/revoke`, m1.s)).status).toBe(404);

    await client(admin.s).apiKeys.revoke.mutate({ id: m2Key.id });
    await client(admin.s).apiKeys.revoke.mutate({ id: ownerKey.id });
    await client(owner.s).apiKeys.revoke.mutate({ id: adminKey.id });
    for (const gone of [m2Key, ownerKey, adminKey]) expect((await me(gone.value)).status).toBe(401);
    expect((await me(m2Other.value)).status).toBe(200);
  });

  it('answers unknown and foreign ids with 404 and leaves the other tenant\u2019s key working', async () => {
    const a = await team();
    const b = await team();
    const foreign = await client(b.m1.s).apiKeys.create.mutate({ name: 'b', type: 'internal' });
    for (const token of [a.owner.s, a.org.internalKey]) {
      expect(await refusal(client(token).apiKeys.revoke.mutate({ id: foreign.id }))).toEqual({ status: 404, code: 'not_found' });
    }
    expect(await refusal(client(a.owner.s).apiKeys.revoke.mutate({ id: '00000000-0000-4000-8000-000000000000' }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    expect((await rest('POST', '/api-keys/not-a-uuid/revoke', a.owner.s)).body.code).toBe('validation_failed');
    expect((await me(foreign.value)).status).toBe(200);
    const [row] = await t.sql('select revoked_at from api_keys where id = ?', [foreign.id]);
    expect(row!.revoked_at).toBeNull();
  });
});

describe('the surface', () => {
  it('refuses Public keys and anonymous callers, and documents the operations', async () => {
    const org = await t.newOrg();
    expect((await rest('GET', '/api-keys', org.publicKey)).body.code).toBe('wrong_api_surface');
    expect((await rest('GET', '/api-keys')).status).toBe(401);
    expect((await rest('POST', '/api-keys', undefined, { name: 'x', type: 'internal' })).status).toBe(401);
    const doc = (await rest('GET', '/docs/json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api-keys', '/api-keys/{id}/revoke']));
    expect(doc.paths['/api-keys'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('expiresInDays');
  });
});
