import { EVENT_NAMES } from '#core/events/names.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { newTestOrg, refusal, rest, type TestOrg } from '../../internal/contacts-support.ts';
import { PUBLIC_V4, secretBytes, testDns } from './support.ts';

const { resolver } = testDns({ 'hooks.example.com': [PUBLIC_V4], 'other.example.com': [PUBLIC_V4] });
let t: TestApp;
let org: TestOrg;
beforeAll(async () => {
  t = await initTestApp({}, { resolver });
  org = await newTestOrg(t);
});
afterAll(async () => t?.close());

const URL_A = 'https://hooks.example.com/leadwire';
const api = (method: string, path: string, key: string, body?: unknown) => rest(t, method, `/webhooks${path}`, key, body);
const stored = async (id: string) =>
  (
    await t.sql<Record<string, any>>(
      `select kind, url, events, enabled, disabled_reason, failure_count, secret, previous_secret, previous_secret_expires_at, created_by_id, created_at, updated_at
     from webhook_endpoints where id = ?`,
      [id],
    )
  )[0];

describe('webhook endpoints: create, read, change, delete', () => {
  it('creates an endpoint over REST (201) with a whsec_ secret, enabled, and stores it as kind endpoint', async () => {
    const at = new Date(t.clock.now().getTime() + 60_000);
    t.clock.freeze(at);
    const r = await api('POST', '', org.ownerKey, { url: URL_A, events: ['contact.created', 'deal.won'], description: 'CRM sync' });
    t.clock.unfreeze();
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      url: URL_A,
      events: ['contact.created', 'deal.won'],
      description: 'CRM sync',
      filter: null,
      enabled: true,
      disabledReason: null,
      failureCount: 0,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      previousSecretExpiresAt: null,
      createdAt: at.toISOString(),
      updatedAt: at.toISOString(),
    });
    expect(secretBytes(r.body.secret).length).toBeGreaterThanOrEqual(24);
    expect(await stored(r.body.id)).toMatchObject({ kind: 'endpoint', enabled: true, secret: r.body.secret, created_by_id: org.ownerId });
  });

  it('creates over typed tRPC too, canonicalises the URL, and gives every endpoint its own secret', async () => {
    const a = await org.admin.webhooks.create.mutate({ url: 'HTTPS://Hooks.Example.com:443/a b?x=1', events: ['task.created'] });
    const b = await org.admin.webhooks.create.mutate({ url: URL_A, events: ['task.created'] });
    expect(a.url).toBe('https://hooks.example.com/a%20b?x=1');
    expect(a.description).toBeNull();
    expect(a.secret).not.toBe(b.secret);
  });

  it('accepts "*" as every event, now and later: answered as ["*"], stored as * followed by the catalogue (ping excluded)', async () => {
    const all = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['*'] });
    expect(all.events).toEqual(['*']);
    expect((await stored(all.id))!.events).toEqual(['*', ...EVENT_NAMES.filter((e) => e !== 'ping')]);
    // Changing another field keeps it; naming events replaces it.
    expect((await org.owner.webhooks.update.mutate({ id: all.id, description: 'all of it' })).events).toEqual(['*']);
    expect((await org.owner.webhooks.update.mutate({ id: all.id, events: ['deal.won'] })).events).toEqual(['deal.won']);
    expect((await stored(all.id))!.events).toEqual(['deal.won']);
  });

  it("lists only this organization's endpoints, newest first, paged, never the automation REST hooks", async () => {
    const mine = await newTestOrg(t);
    const made = [];
    for (const n of [1, 2, 3]) {
      t.clock.advance(1000);
      made.push(await mine.owner.webhooks.create.mutate({ url: `${URL_A}/${n}`, events: ['contact.created'] }));
    }
    await t.sql(
      `insert into webhook_endpoints (organization_id, kind, url, events, secret) values (?, 'rest_hook', 'https://hooks.zapier.com/x', '{contact.created}', 'whsec_x')`,
      [mine.orgId],
    );
    const first = await mine.owner.webhooks.list.query({ limit: 2 });
    expect(first.items.map((e) => e.id)).toEqual([made[2]!.id, made[1]!.id]);
    const second = await mine.owner.webhooks.list.query({ limit: 2, cursor: first.nextCursor! });
    expect(second).toEqual({ items: [made[0]], nextCursor: null });
    const r = await rest(t, 'GET', '/webhooks', mine.ownerKey);
    expect(r.status).toBe(200);
    expect(r.body.items).toHaveLength(3);
    expect((await api('GET', `/${made[0]!.id}`, mine.ownerKey)).body).toEqual(made[0]);
  });

  it('changes events and description with PATCH, keeping what was not sent', async () => {
    const e = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'], description: 'first' });
    t.clock.advance(5000);
    const r = await api('PATCH', `/${e.id}`, org.ownerKey, { events: ['deal.won', 'deal.lost'] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ url: URL_A, events: ['deal.won', 'deal.lost'], description: 'first', enabled: true, secret: e.secret });
    expect(Date.parse(r.body.updatedAt) - Date.parse(e.updatedAt)).toBeGreaterThanOrEqual(5000);
    const cleared = await org.owner.webhooks.update.mutate({ id: e.id, description: null });
    expect(cleared).toMatchObject({ description: null, events: ['deal.won', 'deal.lost'] });
  });

  it('deletes with DELETE (204, no body); a second delete is 404', async () => {
    const e = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'] });
    const res = await fetch(`${t.origin}/api/webhooks/${e.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${org.ownerKey}` } });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await stored(e.id)).toBeUndefined();
    expect(await api('DELETE', `/${e.id}`, org.ownerKey)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    const again = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'] });
    await org.owner.webhooks.delete.mutate({ id: again.id });
    expect(await refusal(org.owner.webhooks.get.query({ id: again.id }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('keeps secrets out of caches', async () => {
    const res = await fetch(`${t.origin}/api/webhooks`, { headers: { authorization: `Bearer ${org.ownerKey}` } });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('webhook endpoints: disable, enable, rotate', () => {
  it('disables with the actor named in the reason; disabling again keeps the first reason', async () => {
    const e = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'] });
    const [owner] = await t.sql<{ email: string }>('select email from users where id = ?', [org.ownerId]);
    const r = await api('POST', `/${e.id}/disable`, org.ownerKey);
    expect(r).toMatchObject({ status: 200, body: { enabled: false, disabledReason: `disabled by ${owner!.email}` } });
    const again = await org.admin.webhooks.disable.mutate({ id: e.id });
    expect(again.disabledReason).toBe(`disabled by ${owner!.email}`);
  });

  it('enables: failure count back to 0, reason cleared', async () => {
    const e = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'] });
    await t.sql(
      `update webhook_endpoints set enabled = false, failure_count = 10, disabled_reason = '10 failed attempts in a row' where id = ?`,
      [e.id],
    );
    const r = await api('POST', `/${e.id}/enable`, org.ownerKey);
    expect(r).toMatchObject({ status: 200, body: { enabled: true, failureCount: 0, disabledReason: null } });
    expect(await stored(e.id)).toMatchObject({ enabled: true, failure_count: 0, disabled_reason: null });
  });

  it('rotates the secret: a new one at once, the old one kept for 24 hours by the clock', async () => {
    const e = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'] });
    const at = new Date(t.clock.now().getTime() + 60_000);
    const expires = new Date(at.getTime() + 24 * 3600_000).toISOString();
    t.clock.freeze(at);
    const r = await api('POST', `/${e.id}/rotate-secret`, org.ownerKey);
    t.clock.unfreeze();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ secret: expect.stringMatching(/^whsec_/), previousSecretExpiresAt: expires });
    expect(r.body.secret).not.toBe(e.secret);
    expect(secretBytes(r.body.secret).length).toBeGreaterThanOrEqual(24);
    const row = await stored(e.id);
    expect(row).toMatchObject({ secret: r.body.secret, previous_secret: e.secret });
    expect(new Date(row!.previous_secret_expires_at).toISOString()).toBe(expires);
    expect(await org.owner.webhooks.get.query({ id: e.id })).toMatchObject({ secret: r.body.secret, previousSecretExpiresAt: expires });

    // A second rotation keeps only the secret it replaces.
    const second = await org.admin.webhooks.rotateSecret.mutate({ id: e.id });
    expect(await stored(e.id)).toMatchObject({ secret: second.secret, previous_secret: r.body.secret });
  });
});

describe('webhook endpoints: who may', () => {
  it('refuses members on every procedure with 403 forbidden_role, over REST and tRPC, changing nothing', async () => {
    const e = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'] });
    const before = await stored(e.id);
    const calls: [string, string, unknown?][] = [
      ['GET', ''],
      ['POST', '', { url: URL_A, events: ['contact.created'] }],
      ['GET', `/${e.id}`],
      ['PATCH', `/${e.id}`, { url: 'https://other.example.com/x' }],
      ['DELETE', `/${e.id}`],
      ['POST', `/${e.id}/enable`],
      ['POST', `/${e.id}/disable`],
      ['POST', `/${e.id}/rotate-secret`],
    ];
    for (const [method, path, body] of calls) {
      const r = await api(method, path, org.memberKey, body);
      expect(r, `${method} ${path}`).toMatchObject({ status: 403, body: { code: 'forbidden_role', required: ['owner', 'admin'] } });
    }
    expect(await refusal(org.member.webhooks.list.query({}))).toMatchObject({ status: 403, code: 'forbidden_role' });
    expect(await refusal(org.member.webhooks.rotateSecret.mutate({ id: e.id }))).toMatchObject({ status: 403, code: 'forbidden_role' });
    expect(await stored(e.id)).toEqual(before);
    const made = await t.sql(
      `select id from webhook_endpoints where created_by_id = (select created_by_id from api_keys where organization_id = ? and name = 'member')`,
      [org.orgId],
    );
    expect(made).toEqual([]);
  });

  it('lets a signed-in owner (session) manage endpoints', async () => {
    const e = await org.session.webhooks.create.mutate({ url: URL_A, events: ['contact.created'] });
    expect((await org.session.webhooks.get.query({ id: e.id })).secret).toBe(e.secret);
  });

  it("answers 404 for another organization's endpoint on every procedure, changing nothing", async () => {
    const other = await newTestOrg(t);
    const theirs = await other.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'] });
    const before = await stored(theirs.id);
    for (const [method, path, body] of [
      ['GET', ''],
      ['PATCH', '', { events: ['deal.won'] }],
      ['DELETE', ''],
      ['POST', '/enable'],
      ['POST', '/disable'],
      ['POST', '/rotate-secret'],
    ] as [string, string, unknown?][]) {
      const r = await api(method, `/${theirs.id}${path}`, org.ownerKey, body);
      expect(r, `${method} ${path}`).toMatchObject({ status: 404, body: { code: 'not_found' } });
    }
    expect(await stored(theirs.id)).toEqual(before);
    const list = await org.owner.webhooks.list.query({ limit: 100 });
    expect(list.items.map((i) => i.id)).not.toContain(theirs.id);
  });

  it('refuses a Public API key as the wrong surface, and no key as unauthorized', async () => {
    expect(await api('GET', '', org.publicKey)).toMatchObject({ status: 403, body: { code: 'wrong_api_surface' } });
    expect(await api('POST', '', org.publicKey, { url: URL_A, events: ['contact.created'] })).toMatchObject({
      status: 403,
      body: { code: 'wrong_api_surface' },
    });
    const res = await fetch(`${t.origin}/api/webhooks`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthorized' });
  });
});

describe('webhook endpoints in the internal contract', () => {
  it('documents every route with its success status, a 204 without a body, and the codes it answers with', async () => {
    const doc = (await (await fetch(`${t.origin}/api/docs/json`)).json()) as { paths: Record<string, Record<string, any>> };
    const ops = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/webhooks'))
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as const));
    const byRoute = new Map<string, any>(ops);
    for (const route of [
      'GET /webhooks',
      'POST /webhooks',
      'GET /webhooks/{id}',
      'PATCH /webhooks/{id}',
      'DELETE /webhooks/{id}',
      'POST /webhooks/{id}/enable',
      'POST /webhooks/{id}/disable',
      'POST /webhooks/{id}/rotate-secret',
    ]) {
      expect(byRoute.has(route), route).toBe(true);
      expect(byRoute.get(route)['x-error-codes'], route).toContain('forbidden_role');
    }
    expect(Object.keys(byRoute.get('POST /webhooks').responses)).toContain('201');
    // No body; the rate-limit headers an Internal key's answers carry (issue 17).
    expect(byRoute.get('DELETE /webhooks/{id}').responses['204']).toEqual({ description: 'No content.', headers: expect.any(Object) });
    expect(byRoute.get('DELETE /webhooks/{id}').responses['204'].content).toBeUndefined();
    expect(byRoute.get('POST /webhooks/{id}/enable')['x-error-codes']).toContain('webhook_url_refused');
    expect(byRoute.get('POST /webhooks').requestBody.content['application/json'].example).toMatchObject({
      url: expect.stringMatching(/^https:\/\//),
    });
  });
});
