/**
 * Automation-platform REST hooks (spec "Automation-platform hooks", "Authentication" 9): the Internal key in X-Api-Key
 * (or Authorization: Bearer), subscribe / unsubscribe / me over real HTTP, and what is stored for the delivery engine.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { internalClient } from '../support/internal.ts';
import { automation, orgWithRoles, testResolver } from './support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp({}, { resolver: testResolver });
});
afterAll(async () => t?.close());

const HOOK = 'https://hooks.example.com/hooks/standard/1/abc/';
const hooksOf = (orgId: string) =>
  t.sql<{
    id: string;
    kind: string;
    url: string;
    events: string[];
    enabled: boolean;
    disabled_reason: string | null;
    secret: string;
    api_key_id: string | null;
    created_by_id: string;
  }>(
    `select id, kind, url, events, enabled, disabled_reason, secret, api_key_id, created_by_id from webhook_endpoints where organization_id = ? order by created_at, id`,
    [orgId],
  );
const keyId = async (orgId: string, userId: string) =>
  (
    await t.sql<{ id: string }>(`select id from api_keys where organization_id = ? and created_by_id = ? and type = 'internal'`, [
      orgId,
      userId,
    ])
  )[0]!.id;

async function signIn(orgId: string): Promise<string> {
  const [owner] = await t.sql<{ email: string }>(`select email from users where organization_id = ? and role = 'owner'`, [orgId]);
  const res = await fetch(`${t.origin}/api/accounts/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: owner!.email, password: 'correct horse battery staple' }),
  });
  return ((await res.json()) as { token: string }).token;
}

describe('subscribe', () => {
  it('stores a rest_hook for one trigger with a signing secret and the key that subscribed, with X-Api-Key', async () => {
    const org = await t.newOrg();
    const at = new Date('2031-03-04T05:06:07.089Z');
    t.clock.freeze(at);
    const res = await automation(
      t,
      'POST',
      '/subscribe',
      { apiKey: org.internalKey },
      { hookUrl: HOOK, triggerEvent: 'contact.created' },
    ).finally(() => t.clock.unfreeze());
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      hookUrl: HOOK,
      triggerEvent: 'contact.created',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      enabled: true,
      disabledReason: null,
      createdAt: at.toISOString(),
    });
    expect(await hooksOf(org.orgId)).toEqual([
      {
        id: res.body.id,
        kind: 'rest_hook',
        url: HOOK,
        events: ['contact.created'],
        enabled: true,
        disabled_reason: null,
        secret: res.body.secret,
        api_key_id: await keyId(org.orgId, org.userId),
        created_by_id: org.userId,
      },
    ]);
  });

  it('works the same with Authorization: Bearer, over typed tRPC, and with a session (no key recorded)', async () => {
    const org = await t.newOrg();
    const bearer = await automation(
      t,
      'POST',
      '/subscribe',
      { bearer: org.internalKey },
      { hookUrl: `${HOOK}1`, triggerEvent: 'deal.won' },
    );
    expect(bearer.status).toBe(201);
    const typed = await internalClient(t, org.internalKey).automation.subscribe.mutate({
      hookUrl: `${HOOK}2`,
      triggerEvent: 'task.completed',
    });
    expect(typed).toMatchObject({ triggerEvent: 'task.completed', enabled: true });
    const session = await automation(
      t,
      'POST',
      '/subscribe',
      { bearer: await signIn(org.orgId) },
      { hookUrl: `${HOOK}3`, triggerEvent: 'form.submitted' },
    );
    expect(session.status).toBe(201);
    const rows = await hooksOf(org.orgId);
    const key = await keyId(org.orgId, org.userId);
    expect(rows.map((r) => [r.events[0], r.api_key_id])).toEqual([
      ['deal.won', key],
      ['task.completed', key],
      ['form.submitted', null],
    ]);
  });

  it('refuses a hookUrl that can never be delivered to with 422 hook_url_refused naming the reason, storing nothing', async () => {
    const org = await t.newOrg();
    const cases: [string, RegExp][] = [
      ['https://10.0.0.5/hook', /10\.0\.0\.5 is in the private range/],
      ['https://192.168.1.20:8443/hook', /192\.168\.1\.20 is in .*private/],
      ['https://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is in the link-local range/],
      ['https://127.0.0.1:8443/hook', /127\.0\.0\.1 is in .*loopback/],
      ['https://[::1]/hook', /::1 is in .*loopback/],
      ['https://[fd00:ec2::254]/hook', /fd00:ec2::254 is in the unique-local range/],
      ['https://[fe80::1]/hook', /link-local/],
      ['https://[::ffff:10.0.0.1]/hook', /10\.0\.0\.1 is in .*private/],
      ['https://localhost/hook', /localhost resolves to 127\.0\.0\.1 is in .*loopback/],
      ['https://ip6-localhost/hook', /ip6-localhost resolves to ::1 is in .*loopback/],
      ['https://intranet.example.com/hook', /intranet\.example\.com resolves to 10\.1\.2\.3 is in .*private/],
      ['https://ula.example.com/hook', /ula\.example\.com resolves to fd12:3456:789a::1 is in .*unique-local/],
      // A name with one private answer among public ones is refused too (a rebinding attempt).
      ['https://mixed.example.com/hook', /169\.254\.169\.254/],
      ['https://nowhere.example.com/hook', /nowhere\.example\.com could not be resolved \(ENOTFOUND\)/],
    ];
    for (const [hookUrl, reason] of cases) {
      const res = await automation(t, 'POST', '/subscribe', { apiKey: org.internalKey }, { hookUrl, triggerEvent: 'contact.created' });
      expect(res.status, hookUrl).toBe(422);
      expect(res.body, hookUrl).toEqual({ error: expect.any(String), code: 'hook_url_refused', reason: expect.stringMatching(reason) });
      expect(res.body.error, hookUrl).toBe(`hookUrl is refused: ${res.body.reason}. Nothing was subscribed`);
    }
    // http:// where https is required is refused by the input rule, before any address is looked at.
    const http = await automation(
      t,
      'POST',
      '/subscribe',
      { apiKey: org.internalKey },
      { hookUrl: 'http://hooks.example.com/x', triggerEvent: 'contact.created' },
    );
    expect(http).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'hookUrl' }] } });
    expect(await hooksOf(org.orgId)).toEqual([]);
    // The same organization subscribes a deliverable URL as before.
    const good = await automation(t, 'POST', '/subscribe', { apiKey: org.internalKey }, { hookUrl: HOOK, triggerEvent: 'contact.created' });
    expect(good).toMatchObject({ status: 201, body: { enabled: true, disabledReason: null } });
    expect((await hooksOf(org.orgId)).map((r) => r.url)).toEqual([HOOK]);
  });

  it('lists hook_url_refused among the answers of subscribe in the internal OpenAPI document', async () => {
    const doc = (await (await fetch(`${t.origin}/api/docs/json`)).json()) as { paths: Record<string, Record<string, any>> };
    const op = doc.paths['/integrations/automation/subscribe']!.post;
    expect(op['x-error-codes']).toContain('hook_url_refused');
    expect(Object.keys(op.responses)).toContain('422');
  });

  it('returns the existing hook when the same URL subscribes to the same trigger again, even concurrently', async () => {
    const org = await t.newOrg();
    const body = { hookUrl: HOOK, triggerEvent: 'contact.updated' };
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => automation(t, 'POST', '/subscribe', { apiKey: org.internalKey }, body)),
    );
    expect(replies.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    const other = await automation(t, 'POST', '/subscribe', { apiKey: org.internalKey }, { ...body, triggerEvent: 'contact.deleted' });
    expect(other.body.id).not.toBe(replies[0]!.body.id);
    expect(await hooksOf(org.orgId)).toHaveLength(2);
  });

  it('refuses anything but an https URL and anything but a trigger, naming the input, and stores nothing', async () => {
    const org = await t.newOrg();
    const refuse = async (body: unknown, paths: string[]) => {
      const res = await automation(t, 'POST', '/subscribe', { apiKey: org.internalKey }, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.issues.map((i: { path: string }) => i.path)).toEqual(paths);
      return res.body;
    };
    expect((await refuse({ hookUrl: 'http://hooks.example.com/x', triggerEvent: 'contact.created' }, ['hookUrl'])).error).toMatch(
      /hookUrl: url must use https:\/\//,
    );
    await refuse({ hookUrl: 'ftp://hooks.example.com/x', triggerEvent: 'contact.created' }, ['hookUrl']);
    await refuse({ hookUrl: 'not a url', triggerEvent: 'contact.created' }, ['hookUrl']);
    await refuse({ hookUrl: 'https://user:secret@hooks.example.com/x', triggerEvent: 'contact.created' }, ['hookUrl']);
    await refuse({ hookUrl: `https://hooks.example.com/${'a'.repeat(2100)}`, triggerEvent: 'contact.created' }, ['hookUrl']);
    // Events of the catalogue that are not triggers are refused too.
    for (const triggerEvent of ['contact.score_changed', 'ping', 'nope', '']) {
      const body = await refuse({ hookUrl: HOOK, triggerEvent }, ['triggerEvent']);
      expect(body.error).toMatch(/triggerEvent must be one of: contact\.created, .*booking\.created/);
    }
    const missing = await refuse({}, ['hookUrl', 'triggerEvent']);
    expect(missing.issues[0].message).toBe('hookUrl is required');
    expect(await hooksOf(org.orgId)).toEqual([]);
  });

  it('lets owners and admins subscribe; a member gets 403 forbidden_role and nothing is stored', async () => {
    const org = await orgWithRoles(t);
    const body = { hookUrl: HOOK, triggerEvent: 'contact.created' };
    expect((await automation(t, 'POST', '/subscribe', { apiKey: org.admin.key }, body)).status).toBe(201);
    const member = await automation(t, 'POST', '/subscribe', { apiKey: org.member.key }, { ...body, triggerEvent: 'deal.created' });
    expect(member.status).toBe(403);
    expect(member.body).toMatchObject({ code: 'forbidden_role', required: ['owner', 'admin'] });
    expect((await hooksOf(org.orgId)).map((r) => r.events[0])).toEqual(['contact.created']);
  });
});

describe('X-Api-Key authentication', () => {
  const body = { hookUrl: HOOK, triggerEvent: 'contact.created' };

  it('refuses a Public API key with 403 wrong_api_surface in either header, storing nothing', async () => {
    const org = await t.newOrg();
    for (const cred of [{ apiKey: org.publicKey }, { bearer: org.publicKey }]) {
      const res = await automation(t, 'POST', '/subscribe', cred, body);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: expect.any(String), code: 'wrong_api_surface' });
      expect((await automation(t, 'GET', '/me', cred)).body.code).toBe('wrong_api_surface');
    }
    expect(await hooksOf(org.orgId)).toEqual([]);
  });

  it('answers 401 unauthorized for no key, a malformed, unknown or revoked key, a session token, and two different credentials', async () => {
    const org = await t.newOrg();
    const other = await t.newOrg();
    await t.sql(`update api_keys set revoked_at = now() where organization_id = ? and type = 'internal'`, [other.orgId]);
    const unknown = `ck_live_${'0'.repeat(43)}`;
    const creds = [
      null,
      { apiKey: 'ck_live_short' },
      { apiKey: unknown },
      { apiKey: other.internalKey },
      { apiKey: await signIn(org.orgId) },
      { headers: { 'x-api-key': org.internalKey, authorization: `Bearer ${unknown}` } },
      { headers: { 'x-api-key': org.internalKey, authorization: `Bearer ${org.publicKey}` } },
      { headers: { 'x-api-key': unknown, authorization: `Bearer ${org.internalKey}` } },
    ];
    for (const cred of creds) {
      const res = await automation(t, 'POST', '/subscribe', cred, body);
      expect(res.status, JSON.stringify(cred)).toBe(401);
      expect(res.body).toEqual({ error: expect.any(String), code: 'unauthorized' });
    }
    expect(await hooksOf(org.orgId)).toEqual([]);
    // The same key in both headers is one credential, not a conflict.
    const both = await automation(t, 'GET', '/me', {
      headers: { 'x-api-key': org.internalKey, authorization: `Bearer ${org.internalKey}` },
    });
    expect(both.status).toBe(200);
  });

  it('counts X-Api-Key and Bearer calls against the same Internal key limits (Starter: 60 a minute)', async () => {
    const org = await t.newOrg({ plan: 'starter' });
    // Frozen mid-minute, so the 60 calls cannot straddle two windows.
    t.clock.freeze(new Date('2031-03-04T05:10:30.000Z'));
    onTestFinished(() => t.clock.unfreeze());
    const first = await automation(t, 'GET', '/me', { bearer: org.internalKey });
    const second = await automation(t, 'GET', '/me', { apiKey: org.internalKey });
    expect([first.headers.get('x-ratelimit-remaining'), second.headers.get('x-ratelimit-remaining')]).toEqual(['59', '58']);
    for (let i = 0; i < 58; i++) expect((await automation(t, 'GET', '/me', { apiKey: org.internalKey })).status).toBe(200);
    const limited = await automation(t, 'GET', '/me', { apiKey: org.internalKey });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await automation(t, 'GET', '/me', { bearer: org.internalKey })).status).toBe(429);
  });
});

describe('unsubscribe', () => {
  it('deletes the hook with the key that subscribed it; a second call is 404', async () => {
    const org = await t.newOrg();
    const { body } = await automation(t, 'POST', '/subscribe', { apiKey: org.internalKey }, { hookUrl: HOOK, triggerEvent: 'deal.lost' });
    const res = await automation(t, 'DELETE', `/subscribe/${body.id}`, { apiKey: org.internalKey });
    expect(res).toMatchObject({ status: 204, body: '' });
    expect(await hooksOf(org.orgId)).toEqual([]);
    const again = await automation(t, 'DELETE', `/subscribe/${body.id}`, { apiKey: org.internalKey });
    expect(again).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it("reaches only the caller's organization's REST hooks: others, webhook endpoints and bad ids are 404 or 400", async () => {
    const org = await t.newOrg();
    const stranger = await t.newOrg();
    const { body } = await automation(t, 'POST', '/subscribe', { apiKey: org.internalKey }, { hookUrl: HOOK, triggerEvent: 'deal.won' });
    expect((await automation(t, 'DELETE', `/subscribe/${body.id}`, { apiKey: stranger.internalKey })).status).toBe(404);
    const [endpoint] = await t.sql<{ id: string }>(
      `insert into webhook_endpoints (organization_id, kind, url, events, secret) values (?, 'endpoint', ?, '{contact.created}', 'whsec_x') returning id`,
      [org.orgId, HOOK],
    );
    expect((await automation(t, 'DELETE', `/subscribe/${endpoint!.id}`, { apiKey: org.internalKey })).status).toBe(404);
    const bad = await automation(t, 'DELETE', '/subscribe/not-a-uuid', { apiKey: org.internalKey });
    expect(bad).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    expect((await hooksOf(org.orgId)).map((r) => r.kind).sort()).toEqual(['endpoint', 'rest_hook']);
  });

  it("lets a key remove its own hook after its user became a member, but not a member's key another's hook", async () => {
    const org = await orgWithRoles(t);
    const mine = await automation(t, 'POST', '/subscribe', { apiKey: org.admin.key }, { hookUrl: HOOK, triggerEvent: 'contact.created' });
    const owners = await automation(t, 'POST', '/subscribe', { apiKey: org.internalKey }, { hookUrl: HOOK, triggerEvent: 'deal.created' });
    const refused = await automation(t, 'DELETE', `/subscribe/${owners.body.id}`, { apiKey: org.member.key });
    expect(refused).toMatchObject({ status: 403, body: { code: 'forbidden_role' } });
    await t.sql(`update users set role = 'member' where id = ?`, [org.admin.userId]);
    expect((await automation(t, 'DELETE', `/subscribe/${mine.body.id}`, { apiKey: org.admin.key })).status).toBe(204);
    expect((await hooksOf(org.orgId)).map((r) => r.id)).toEqual([owners.body.id]);
  });
});

describe('me', () => {
  it('names the organization and the user the key acts for, with a ready connection label', async () => {
    const org = await orgWithRoles(t);
    const [o] = await t.sql<{ name: string }>(`select name from organizations where id = ?`, [org.orgId]);
    const [u] = await t.sql<{ email: string }>(`select email from users where id = ?`, [org.userId]);
    const res = await automation(t, 'GET', '/me', { apiKey: org.internalKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      organization: { id: org.orgId, name: o!.name },
      user: { id: org.userId, email: u!.email, name: null },
      role: 'owner',
      via: 'internal_key',
      label: `${o!.name} (${u!.email})`,
    });
    const member = await automation(t, 'GET', '/me', { bearer: org.member.key });
    expect(member.body).toMatchObject({ user: { id: org.member.userId }, role: 'member' });
    expect((await automation(t, 'GET', '/me', null)).status).toBe(401);
  });
});
