/**
 * The overview's data (issue 29): /v1 requests counted per key and outcome in the process's memory and written apart
 * from the requests, deliveries, submissions and page views rolled up from what the server records, the limits in use
 * and the endpoints failing now; what a member sees.
 */
import { runActivityRollup } from '#core/activity/rollup-job.ts';
import { hashPassword } from '#core/accounts/passwords.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { internalClient } from '../support/internal.ts';
import { collect, VISITOR_A, VISITOR_B } from '../tracking/support.ts';
import { insertEndpoint } from '../webhooks/delivery/support.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
const NOW = new Date('2026-12-02T10:30:00.000Z');

beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg();
  t.clock.freeze(NOW);
});
afterAll(async () => {
  t?.clock.unfreeze();
  await t?.close();
});

const totals = (lines: { subject: string; outcome: string; total: number }[]) =>
  Object.fromEntries(lines.map((l) => [`${l.outcome}`, l.total]));

describe('API requests', () => {
  it('are counted per key and outcome without a statement per request, and written when the overview reads them', async () => {
    for (const email of ['a@example.com', 'b@example.com'])
      expect((await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email } })).status).toBe(200);
    expect((await call(t, 'GET', '/contacts/search?email=nobody@example.com', { key: org.publicKey })).status).toBe(404);
    expect((await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { firstName: 'x' } })).status).toBe(400);
    // The key's current minute at its 600: the next request is refused.
    const minute = new Date(NOW.getTime() - (NOW.getTime() % 60_000));
    const [key] = await t.sql<{ id: string }>(`select id from api_keys where organization_id = ? and type = 'public'`, [org.orgId]);
    await t.sql(`update rate_limit_counters set count = 600 where bucket = ? and window_start = ?`, [`key:${key!.id}`, minute]);
    expect((await call(t, 'GET', '/contacts/search?email=a@example.com', { key: org.publicKey })).status).toBe(429);
    expect((await call(t, 'GET', '/contacts/search?email=a@example.com', { key: org.publicKey })).status).toBe(429);

    // Nothing written yet: the requests above added no statement of their own.
    expect(await t.sql(`select series from activity_hourly where organization_id = ?`, [org.orgId])).toEqual([]);

    const owner = internalClient(t, org.internalKey);
    const o = await owner.activity.overview.query({ period: '24h' });
    expect(o.timeZone).toBe('UTC');
    expect(o.buckets).toHaveLength(24);
    expect(o.buckets.at(-1)).toBe('2026-12-02T10:00:00.000Z');
    const lines = o.api.filter((l) => l.subject === key!.id);
    expect(totals(lines)).toEqual({ '2xx': 2, '4xx': 2, '429': 2 });
    expect(lines.every((l) => l.counts.at(-1) === l.total && l.name === 'Bootstrap public key')).toBe(true);
    // The key at its limit heads the limits in use.
    expect(o.limits.keys[0]).toMatchObject({ id: key!.id, limit: 600 });
    expect(o.limits.keys[0]!.used).toBeGreaterThanOrEqual(601);

    // Written once: reading again adds nothing.
    const again = await owner.activity.overview.query({ period: '7d' });
    expect(totals(again.api.filter((l) => l.subject === key!.id))).toEqual({ '2xx': 2, '4xx': 2, '429': 2 });
    expect(again.buckets).toHaveLength(7);
    expect(again.buckets.at(-1)).toBe('2026-12-02T00:00:00.000Z');
  });
});

describe('the rollup', () => {
  it('counts deliveries by endpoint and state, submissions by form, page views and visitors; rewriting, not adding', async () => {
    const o = await t.newOrg();
    const ep = await insertEndpoint(t, o.orgId, 'https://receiver.example/hook', { failureCount: 3 });
    const states = [
      ['succeeded', null],
      ['succeeded', null],
      ['failed', null],
      ['pending', null],
      ['in_flight', null],
      ['skipped', 'workspace over 1,000 deliveries per hour'],
      ['skipped', 'endpoint disabled'],
    ] as const;
    for (const [state, reason] of states)
      await t.sql(
        `insert into webhook_deliveries (organization_id, endpoint_id, event, body, state, skip_reason, created_at) values (?, ?, 'contact.created', '{}', ?, ?, ?)`,
        [o.orgId, ep.id, state, reason, NOW],
      );
    await t.sql(
      `insert into webhook_attempts (id, organization_id, endpoint_id, delivery_id, event, attempt, outcome, status_code, error, created_at)
       select gen_random_uuid(), organization_id, endpoint_id, id, event, 1, 'failed', 503, 'the receiver answered 503', ? from webhook_deliveries where endpoint_id = ? and state = 'failed'`,
      [NOW, ep.id],
    );
    const [form] = await t.sql<{ id: string }>(`insert into forms (organization_id, name) values (?, 'Demo request') returning id`, [
      o.orgId,
    ]);
    for (let i = 0; i < 3; i++)
      await t.sql(`insert into form_submissions (organization_id, form_id, form_name, created_at) values (?, ?, 'Demo request', ?)`, [
        o.orgId,
        form!.id,
        NOW,
      ]);
    for (const visitor of [VISITOR_A, VISITOR_A, VISITOR_B, undefined])
      expect((await collect(t, { org: o.orgId, url: 'https://shop.example/', visitor })).status).toBe(202);

    const first = await runActivityRollup(t.runtime.deps.db, t.clock.now());
    expect(first.written).toBeGreaterThan(0);
    // A second run over the same hours changes nothing.
    expect(await runActivityRollup(t.runtime.deps.db, t.clock.now())).toEqual({ written: 0, deleted: 0 });

    const owner = internalClient(t, o.internalKey);
    const view = await owner.activity.overview.query({ period: '24h' });
    expect(totals(view.deliveries!)).toEqual({ succeeded: 2, failed: 1, pending: 2, over_cap: 1, skipped: 1 });
    expect(view.deliveries!.every((l) => l.name === 'https://receiver.example/hook')).toBe(true);
    expect(view.submissions).toEqual([expect.objectContaining({ subject: form!.id, name: 'Demo request', total: 3 })]);
    expect(totals(view.pageViews)).toEqual({ cookie: 3, anonymous: 1, visitors: 2 });
    expect(view.failing).toEqual([
      expect.objectContaining({ id: ep.id, failureCount: 3, failuresUntilDisabled: 7, lastError: 'HTTP 503', enabled: true }),
    ]);
    const month = await owner.activity.overview.query({ period: '30d' });
    expect(totals(month.pageViews)).toEqual({ cookie: 3, anonymous: 1, visitors: 2 });

    // The pending ones went through: the next run moves them, leaving no pending row behind.
    await t.sql(`update webhook_deliveries set state = 'succeeded' where endpoint_id = ? and state in ('pending', 'in_flight')`, [ep.id]);
    expect(await runActivityRollup(t.runtime.deps.db, t.clock.now())).toEqual({ written: 1, deleted: 1 });
    expect(totals((await owner.activity.overview.query({ period: '24h' })).deliveries!)).toEqual({
      succeeded: 4,
      failed: 1,
      over_cap: 1,
      skipped: 1,
    });
  });

  it('shows a member their own keys and no webhook figures', async () => {
    const o = await t.newOrg();
    const [member] = await t.sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role) values (?, ?, ?, 'member') returning id`,
      [o.orgId, `member-${Date.now()}@example.com`, await hashPassword('a long passphrase here')],
    );
    const memberKey = await t.newKey({
      orgId: o.orgId,
      userId: member!.id,
      name: 'Member sync',
      type: 'public',
      permissions: ['contacts:read'],
    });
    const memberInternal = await t.newKey({ orgId: o.orgId, userId: member!.id, name: 'Member tools', type: 'internal' });
    expect((await call(t, 'GET', '/contacts/search?email=x@example.com', { key: memberKey })).status).toBe(404);
    expect((await call(t, 'GET', '/contacts/search?email=x@example.com', { key: o.publicKey })).status).toBe(404);
    const view = await internalClient(t, memberInternal).activity.overview.query({ period: '24h' });
    expect(view.api.map((l) => [l.name, l.outcome, l.total])).toEqual([['Member sync', '4xx', 1]]);
    expect(view.deliveries).toBeNull();
    expect(view.failing).toBeNull();
    expect(view.limits.deliveries).toBeNull();
  });
});

describe('website analytics', () => {
  it('breaks the page views down by page, referrer and UTM value, counting visitors and anonymous views', async () => {
    const o = await t.newOrg();
    const pricing = 'https://shop.example/pricing?utm_source=newsletter&utm_campaign=launch';
    for (const v of [
      { url: pricing, referrer: 'https://www.google.com/search?q=x', visitor: VISITOR_A },
      { url: pricing, referrer: 'https://www.google.com/', visitor: VISITOR_A },
      { url: 'https://shop.example/', visitor: VISITOR_B },
      { url: 'https://shop.example/' },
    ])
      expect((await collect(t, { org: o.orgId, ...v })).status).toBe(202);
    const client = internalClient(t, o.internalKey);
    const w = await client.activity.website.query({ period: '7d' });
    expect(w.totals).toEqual({ views: 4, visitors: 2, anonymousViews: 1, identified: 0 });
    expect(w.views.at(-1)).toBe(4);
    expect(w.pages).toEqual([
      { value: '/', views: 2, visitors: 1 },
      { value: '/pricing', views: 2, visitors: 1 },
    ]);
    expect(w.referrers).toEqual([{ value: 'www.google.com', views: 2, visitors: 1 }]);
    expect(w.utmSources).toEqual([{ value: 'newsletter', views: 2, visitors: 1 }]);
    expect(w.utmCampaigns).toEqual([{ value: 'launch', views: 2, visitors: 1 }]);
    const one = await client.activity.website.query({ period: '24h', page: '/pricing' });
    expect(one.totals).toEqual({ views: 2, visitors: 1, anonymousViews: 0, identified: 0 });
    expect(one.buckets).toHaveLength(24);
  });
});
