import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../../support/app.ts';
import { newTestOrg, refusal, rest, type TestOrg } from '../../internal/contacts-support.ts';
import { PUBLIC_V4, testDns } from './support.ts';

const { resolver } = testDns({ 'hooks.example.com': [PUBLIC_V4] });
let t: TestApp;
let org: TestOrg;
beforeAll(async () => {
  t = await initTestApp({}, { resolver });
  org = await newTestOrg(t);
});
afterAll(async () => t?.close());

const URL_A = 'https://hooks.example.com/leadwire';
const VIP = { 'contact.tags': 'vip' };

describe('an endpoint’s delivery filter: saved, shown, changed', () => {
  it('is stored as given, shown on the endpoint, kept when a PATCH does not send it, and removed with null', async () => {
    const created = await rest(t, 'POST', '/webhooks', org.ownerKey, { url: URL_A, events: ['contact.created'], filter: VIP });
    expect(created).toMatchObject({ status: 201, body: { filter: VIP } });
    const id = created.body.id as string;
    const [row] = await t.sql<{ filter: unknown }>('select filter from webhook_endpoints where id = ?', [id]);
    expect(row!.filter).toEqual(VIP);
    const renamed = await rest(t, 'PATCH', `/webhooks/${id}`, org.ownerKey, { description: 'vip only' });
    expect(renamed.body.filter).toEqual(VIP);
    const wider = { $or: [VIP, { 'contact.leadScore': { $gte: 50 } }] };
    expect((await org.owner.webhooks.update.mutate({ id, filter: wider })).filter).toEqual(wider);
    expect((await rest(t, 'PATCH', `/webhooks/${id}`, org.ownerKey, { filter: null })).body.filter).toBeNull();
    expect((await org.owner.webhooks.get.query({ id })).filter).toBeNull();
  });

  it('refuses a bad filter with 400 naming the bad part, and saves nothing', async () => {
    const before = await t.sql('select id from webhook_endpoints where organization_id = ?', [org.orgId]);
    const r = await rest(t, 'POST', '/webhooks', org.ownerKey, {
      url: URL_A,
      events: ['contact.created'],
      filter: { $or: [VIP, { 'contact.leadScore': { $gt: 'fifty' } }] },
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'validation_failed',
      error: 'Validation failed: filter: $or[1]["contact.leadScore"].$gt needs a number (got "fifty")',
    });
    expect(await t.sql('select id from webhook_endpoints where organization_id = ?', [org.orgId])).toEqual(before);

    const e = await org.owner.webhooks.create.mutate({ url: URL_A, events: ['contact.created'], filter: VIP });
    const bad = await refusal(org.owner.webhooks.update.mutate({ id: e.id, filter: { 'contact.email': { $like: '%@example.com' } } }));
    expect(bad).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(bad.error).toContain('"contact.email".$like: unknown operator');
    expect((await org.owner.webhooks.get.query({ id: e.id })).filter).toEqual(VIP);
  });
});

describe('trying a filter against recent events', () => {
  it('says of each recent event of the types asked whether the filter lets it through, newest first, changing nothing', async () => {
    const mine = await newTestOrg(t);
    for (const [email, tags] of [
      ['a@example.com', ['vip']],
      ['b@example.com', []],
      ['c@example.com', ['vip', 'beta']],
    ] as const) {
      const res = await call(t, 'POST', '/contacts/upsert', { key: mine.publicKey, body: { email, tags } });
      expect(res.status).toBe(200);
    }
    const r = await rest(t, 'POST', '/webhooks/filter-preview', mine.ownerKey, { filter: VIP, events: ['contact.created'] });
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: { data: { contact: { email: string } }; matched: boolean }) => [i.data.contact.email, i.matched])).toEqual([
      ['c@example.com', true],
      ['b@example.com', false],
      ['a@example.com', true],
    ]);
    expect(r.body).toMatchObject({ matched: 2, scanned: 3 });
    expect(r.body.items[0]).toMatchObject({ id: expect.any(String), event: 'contact.created', timestamp: expect.any(String) });
    // Types not asked for are left out; no filter lets everything through; a limit caps the list.
    expect((await rest(t, 'POST', '/webhooks/filter-preview', mine.ownerKey, { filter: VIP, events: ['deal.won'] })).body.items).toEqual(
      [],
    );
    const all = await mine.owner.webhooks.previewFilter.mutate({ filter: null, limit: 2 });
    expect(all.items.map((i) => i.matched)).toEqual([true, true]);
    expect(await t.sql('select id from webhook_endpoints where organization_id = ?', [mine.orgId])).toEqual([]);
  });

  it('checks the filter as saving does, and is for owners and admins only', async () => {
    const r = await rest(t, 'POST', '/webhooks/filter-preview', org.ownerKey, { filter: { 'contact.tags': { $in: 'vip' } } });
    expect(r).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    expect(r.body.error).toContain('"contact.tags".$in needs an array');
    expect(await refusal(org.member.webhooks.previewFilter.mutate({ filter: VIP }))).toMatchObject({ status: 403, code: 'forbidden_role' });
    expect((await org.admin.webhooks.previewFilter.mutate({ filter: VIP })).items).toBeInstanceOf(Array);
  });
});
