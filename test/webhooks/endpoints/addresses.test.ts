import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { newTestOrg, refusal, rest, type TestOrg } from '../../internal/contacts-support.ts';
import { PUBLIC_V4, PUBLIC_V6, testDns } from './support.ts';

const net = testDns({
  'hooks.example.com': [PUBLIC_V4],
  'v6.example.com': [PUBLIC_V6],
  'intranet.example.com': ['10.20.30.40'],
  // One private answer among public ones is an attack, not a misconfiguration.
  'mixed.example.com': [PUBLIC_V4, '192.168.1.10'],
  'metadata.example.com': ['169.254.169.254'],
  'moving.example.com': ['10.0.0.7'],
  localhost: ['127.0.0.1', '::1'],
});
let t: TestApp;
let org: TestOrg;
beforeAll(async () => {
  t = await initTestApp({}, { resolver: net.resolver });
  org = await newTestOrg(t);
});
afterAll(async () => t?.close());

const create = (body: unknown) => rest(t, 'POST', '/webhooks', org.ownerKey, body);
const count = async () =>
  (await t.sql<{ n: number }>(`select count(*)::int as n from webhook_endpoints where organization_id = ?`, [org.orgId]))[0]!.n;

describe('webhook endpoint input: refused with 400 validation_failed, nothing saved', () => {
  const badUrls: [string, unknown, RegExp][] = [
    ['http', 'http://hooks.example.com/x', /url must use https:\/\/ \(got http:\)/],
    ['ftp', 'ftp://hooks.example.com/x', /url must use https:\/\/ \(got ftp:\)/],
    ['javascript:', 'javascript:alert(1)', /url must use https:\/\//],
    ['data:', 'data:text/plain,hi', /url must use https:\/\//],
    ['credentials', 'https://user:pass@hooks.example.com/x', /must not contain a user name or password/],
    ['a user name alone', 'https://user@hooks.example.com/x', /must not contain a user name or password/],
    ['relative', '/webhooks/receive', /absolute URL/],
    ['no scheme', 'hooks.example.com/x', /absolute URL/],
    ['empty', '', /must not be empty/],
    ['too long', `https://hooks.example.com/${'a'.repeat(2100)}`, /at most 2048 characters/],
    ['too long once encoded', `https://hooks.example.com/${'é'.repeat(1000)}`, /at most 2048 characters once encoded/],
    ['NUL', 'https://hooks.example.com/\u0000', /NUL/],
    ['not a string', 42, /./],
  ];
  it.each(badUrls)('refuses a URL: %s', async (_, url, message) => {
    const before = await count();
    const r = await create({ url, events: ['contact.created'] });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.issues).toEqual([expect.objectContaining({ path: 'url', message: expect.stringMatching(message) })]);
    expect(r.body.error).toMatch(/^Validation failed: url: /);
    expect(await count()).toBe(before);
  });

  const badEvents: [string, unknown, string, RegExp][] = [
    ['empty', [], 'events', /at least one event/],
    ['unknown name', ['contact.exploded'], 'events.0', /each event must be "\*" or one of: contact\.created/],
    ['ping (sent by /test only)', ['ping'], 'events.0', /each event must be/],
    ['repeated', ['deal.won', 'deal.won'], 'events.1', /deal\.won is listed twice/],
    ['"*" with names', ['*', 'deal.won'], 'events', /"\*" already means every event/],
    ['not a list', 'contact.created', 'events', /./],
    ['missing', undefined, 'events', /./],
  ];
  it.each(badEvents)('refuses events: %s', async (_, events, path, message) => {
    const before = await count();
    const r = await create({ url: 'https://hooks.example.com/x', ...(events === undefined ? {} : { events }) });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'validation_failed' });
    expect(r.body.issues).toContainEqual(expect.objectContaining({ path, message: expect.stringMatching(message) }));
    expect(await count()).toBe(before);
  });

  it('refuses an over-long description and the same bad input on PATCH, leaving the endpoint as it was', async () => {
    expect(await create({ url: 'https://hooks.example.com/x', events: ['deal.won'], description: 'd'.repeat(501) })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', issues: [{ path: 'description' }] },
    });
    const e = await org.owner.webhooks.create.mutate({ url: 'https://hooks.example.com/x', events: ['deal.won'] });
    for (const body of [
      { url: 'http://hooks.example.com/x' },
      { events: [] },
      { events: ['nope'] },
      { url: 'https://a:b@hooks.example.com' },
    ]) {
      const r = await rest(t, 'PATCH', `/webhooks/${e.id}`, org.ownerKey, body);
      expect(r, JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    }
    expect(await org.owner.webhooks.get.query({ id: e.id })).toEqual(e);
    expect(await refusal(org.owner.webhooks.update.mutate({ id: e.id, url: 'ftp://x.example.com' }))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    expect(await rest(t, 'GET', '/webhooks/not-a-uuid', org.ownerKey)).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
  });
});

describe('webhook endpoint addresses: private and internal ones create the endpoint disabled', () => {
  const unsafe: [string, string, RegExp][] = [
    [
      'a private IPv4 literal',
      'https://10.0.0.1/hook',
      /^10\.0\.0\.1 is in the private range; private and internal addresses are refused$/,
    ],
    ['IPv6 loopback without the loopback flag', 'https://[::1]:8443/hook', /^::1 is in the loopback range/],
    ['IPv4 loopback', 'https://127.0.0.1/hook', /127\.0\.0\.1 is in the loopback range/],
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is in the link-local range/],
    ['an IPv4-mapped IPv6 private address', 'https://[::ffff:192.168.0.1]/hook', /192\.168\.0\.1 is in the private range/],
    [
      'a name resolving to a private address',
      'https://intranet.example.com/hook',
      /^intranet\.example\.com resolves to 10\.20\.30\.40 is in the private range/,
    ],
    [
      'a name with one private address among public ones',
      'https://mixed.example.com/hook',
      /mixed\.example\.com resolves to 192\.168\.1\.10/,
    ],
    ['a name resolving to the metadata address', 'https://metadata.example.com/', /169\.254\.169\.254/],
    ['localhost', 'https://localhost/hook', /localhost resolves to 127\.0\.0\.1 is in the loopback range/],
    ['a name that does not resolve', 'https://nxdomain.example.com/hook', /^nxdomain\.example\.com could not be resolved \(ENOTFOUND\)$/],
  ];
  it.each(unsafe)('%s: 201, enabled false, disabledReason says why', async (_, url, reason) => {
    const r = await create({ url, events: ['contact.created'] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ url: new URL(url).href, enabled: false, failureCount: 0, secret: expect.stringMatching(/^whsec_/) });
    expect(r.body.disabledReason).toMatch(reason);
    const [row] = await t.sql<{ enabled: boolean; disabled_reason: string }>(
      `select enabled, disabled_reason from webhook_endpoints where id = ?`,
      [r.body.id],
    );
    expect(row).toEqual({ enabled: false, disabled_reason: r.body.disabledReason });
  });

  it('creates public addresses enabled: a name, an IPv4 and an IPv6 literal, a name with an IPv6 answer', async () => {
    for (const url of [
      'https://hooks.example.com/x',
      `https://${PUBLIC_V4}/x`,
      `https://[${PUBLIC_V6}]/x`,
      'https://v6.example.com:8443/x',
    ]) {
      const r = await create({ url, events: ['contact.created'] });
      expect(r, url).toMatchObject({ status: 201, body: { enabled: true, disabledReason: null } });
    }
  });

  it('checks a changed URL again on PATCH: unsafe disables it with the reason; a fixed one stays disabled until enabled', async () => {
    const e = await org.owner.webhooks.create.mutate({ url: 'https://hooks.example.com/a', events: ['deal.won'] });
    await t.sql(`update webhook_endpoints set failure_count = 4 where id = ?`, [e.id]);
    const bad = await rest(t, 'PATCH', `/webhooks/${e.id}`, org.ownerKey, { url: 'https://intranet.example.com/a' });
    expect(bad).toMatchObject({ status: 200, body: { url: 'https://intranet.example.com/a', enabled: false, failureCount: 0 } });
    expect(bad.body.disabledReason).toMatch(/intranet\.example\.com resolves to 10\.20\.30\.40/);
    const fixed = await org.owner.webhooks.update.mutate({ id: e.id, url: 'https://hooks.example.com/b' });
    expect(fixed).toMatchObject({ url: 'https://hooks.example.com/b', enabled: false, disabledReason: bad.body.disabledReason });
    expect(await org.owner.webhooks.enable.mutate({ id: e.id })).toMatchObject({ enabled: true, disabledReason: null });
  });

  it('does not look the host up again when PATCH leaves the URL as it is', async () => {
    const e = await org.owner.webhooks.create.mutate({ url: 'https://hooks.example.com/same', events: ['deal.won'] });
    const before = net.lookups.length;
    await org.owner.webhooks.update.mutate({ id: e.id, url: 'https://hooks.example.com/same', events: ['deal.lost'] });
    expect(net.lookups.length).toBe(before);
  });

  it('enable checks the URL again: still private -> 409 webhook_url_refused and nothing changes; once DNS is fixed it enables', async () => {
    const r = await create({ url: 'https://moving.example.com/hook', events: ['contact.created'] });
    expect(r.body.enabled).toBe(false);
    const refused = await rest(t, 'POST', `/webhooks/${r.body.id}/enable`, org.ownerKey);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'webhook_url_refused',
      reason: expect.stringMatching(/moving\.example\.com resolves to 10\.0\.0\.7/),
    });
    expect(refused.body.error).toMatch(
      /^The endpoint stays disabled: moving\.example\.com resolves to 10\.0\.0\.7.*Change its URL, then enable it again$/,
    );
    expect(await org.owner.webhooks.get.query({ id: r.body.id })).toEqual(r.body);

    net.dns.set('moving.example.com', [PUBLIC_V4]);
    const enabled = await org.admin.webhooks.enable.mutate({ id: r.body.id });
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null, failureCount: 0 });

    // And an enabled endpoint whose host moved inside is not re-enabled by a later enable either.
    net.dns.set('moving.example.com', ['172.16.0.9']);
    await org.owner.webhooks.disable.mutate({ id: r.body.id });
    expect(await refusal(org.owner.webhooks.enable.mutate({ id: r.body.id }))).toMatchObject({ status: 409, code: 'webhook_url_refused' });
    expect((await org.owner.webhooks.get.query({ id: r.body.id })).enabled).toBe(false);
  });
});

describe('WEBHOOKS_UNSAFE_ALLOW_LOOPBACK', () => {
  let local: TestApp;
  beforeAll(async () => {
    local = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true' }, { resolver: net.resolver });
  });
  afterAll(async () => local?.close());

  it('opens loopback only: 127.0.0.1, [::1] and localhost are enabled, other private addresses still disabled', async () => {
    const { internalKey } = await local.newOrg();
    const make = (url: string) => rest(local, 'POST', '/webhooks', internalKey, { url, events: ['contact.created'] });
    for (const url of ['https://127.0.0.1:9443/hook', 'https://[::1]:9443/hook', 'https://localhost:9443/hook']) {
      expect(await make(url), url).toMatchObject({ status: 201, body: { enabled: true, disabledReason: null } });
    }
    for (const url of ['https://10.0.0.1/hook', 'https://169.254.169.254/', 'https://intranet.example.com/']) {
      const r = await make(url);
      expect(r, url).toMatchObject({ status: 201, body: { enabled: false } });
      expect(r.body.disabledReason).toMatch(/private|link-local/);
    }
  });
});
