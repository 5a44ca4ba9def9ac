import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { answerOf, call, initTestApp, type TestApp } from '../support/app.ts';
import { internalRest } from '../support/internal.ts';
import { collect, VISITOR_A, VISITOR_B } from './support.ts';

/** POST /api/track/event as the snippet's sendBeacon sends it (text/plain). */
async function track(t: TestApp, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.origin}/api/track/event`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return answerOf(res);
}

const LIMIT = 6;
let t: TestApp;
beforeAll(async () => {
  t = await initTestApp({ TRACKING_PAGE_VIEWS_PER_MINUTE: String(LIMIT) });
});
afterAll(async () => t?.close());
beforeEach(() => t.clock.advance(60_000));

type Org = Awaited<ReturnType<TestApp['newOrg']>>;
const event = (org: Org, extra: Record<string, unknown> = {}) => ({
  org: org.orgId,
  url: 'https://shop.example/pricing',
  visitor: VISITOR_A,
  name: 'signup',
  props: { plan: 'pro', seats: 3, trial: true, coupon: null },
  ...extra,
});
const stored = (org: Org) =>
  t.sql<{ name: string; props: unknown; url: string; visitor_id: string | null; contact_id: string | null }>(
    'select name, props, url, visitor_id, contact_id from tracking_events where organization_id = ? order by created_at, id',
    [org.orgId],
  );
const emitted = async (org: Org) =>
  (
    await t.sql<{ payload: any }>(`select payload from outbox_events where organization_id = ? and event = 'tracking.custom_event'`, [
      org.orgId,
    ])
  ).map((r) => r.payload);
async function contact(org: Org, email: string): Promise<string> {
  const res = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

describe('POST /api/track/event', () => {
  it('stores an anonymous visitor’s event (202, any origin) and emits nothing: it is a goal, not a contact’s event', async () => {
    const org = await t.newOrg();
    const res = await track(t, event(org));
    expect(res.status).toBe(202);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await stored(org)).toEqual([
      {
        name: 'signup',
        props: { plan: 'pro', seats: 3, trial: true, coupon: null },
        url: 'https://shop.example/pricing',
        visitor_id: VISITOR_A,
        contact_id: null,
      },
    ]);
    expect(await emitted(org)).toEqual([]);
  });

  it('for a known visitor: tied to the contact, emitted as tracking.custom_event (catalogue shape), in the feed and the timeline', async () => {
    const org = await t.newOrg();
    const id = await contact(org, 'ada@example.com');
    // Identified by ?email= on the page, as the snippet forwards it; the stored address loses it.
    expect(
      (await track(t, event(org, { email: 'Ada@Example.com', url: 'https://shop.example/pricing?email=ada%40example.com' }))).status,
    ).toBe(202);
    // A later event of the same browser is the contact's too, without the identity in the body.
    expect((await track(t, event(org, { name: 'video_played', props: undefined }))).status).toBe(202);
    expect((await stored(org)).map((r) => [r.name, r.url, r.contact_id])).toEqual([
      ['signup', 'https://shop.example/pricing', id],
      ['video_played', 'https://shop.example/pricing', id],
    ]);
    const [first] = await emitted(org);
    expect(first.data).toEqual({
      customEvent: {
        name: 'signup',
        props: { plan: 'pro', seats: 3, trial: true, coupon: null },
        url: 'https://shop.example/pricing',
        visitorId: VISITOR_A,
      },
      contact: { id, firstName: null, email: 'ada@example.com' },
    });
    expect(first.source).toBe('inbound');
    expect(EVENT_CATALOGUE['tracking.custom_event'].payload.safeParse(first).success).toBe(true);

    // The feed shows an event once no older transaction of the cluster is still running: other files' may be.
    const feed = async () => (await call(t, 'GET', '/events?types=tracking.custom_event', { key: org.publicKey })).body.items;
    await expect.poll(async () => (await feed()).length, { timeout: 30_000, interval: 50 }).toBe(2);
    expect((await feed()).map((e: any) => [e.event, e.data.customEvent.name])).toEqual([
      ['tracking.custom_event', 'signup'],
      ['tracking.custom_event', 'video_played'],
    ]);
    const timeline = await internalRest(t, 'GET', `/contacts/${id}`, org.internalKey);
    const items = timeline.body.timeline.items.filter((i: any) => i.kind === 'custom_event');
    expect(items.map((i: any) => [i.name, i.props, i.url])).toEqual([
      ['video_played', {}, 'https://shop.example/pricing'],
      ['signup', { plan: 'pro', seats: 3, trial: true, coupon: null }, 'https://shop.example/pricing'],
    ]);
    // The timeline shows the custom event once, not again as its event.
    expect(timeline.body.timeline.items.filter((i: any) => i.event === 'tracking.custom_event')).toEqual([]);
  });

  it('attaches a visitor’s earlier anonymous events when a page view identifies them', async () => {
    const org = await t.newOrg();
    const id = await contact(org, 'grace@example.com');
    await track(t, event(org, { visitor: VISITOR_B, name: 'pricing_viewed' }));
    expect((await stored(org))[0]!.contact_id).toBeNull();
    expect(
      (await collect(t, { org: org.orgId, url: 'https://shop.example/', visitor: VISITOR_B, email: 'grace@example.com' })).status,
    ).toBe(202);
    expect((await stored(org))[0]!.contact_id).toBe(id);
  });

  it('under GPC or DNT: an anonymous count only (no visitor, identity or query), nothing emitted', async () => {
    const org = await t.newOrg();
    await contact(org, 'ada@example.com');
    for (const header of [{ 'sec-gpc': '1' }, { dnt: '1' }] as Record<string, string>[]) {
      const res = await track(t, event(org, { email: 'ada@example.com', url: 'https://shop.example/pricing?plan=pro' }), header);
      expect(res.status).toBe(202);
    }
    expect((await stored(org)).map((r) => [r.url, r.visitor_id, r.contact_id])).toEqual([
      ['https://shop.example/pricing', null, null],
      ['https://shop.example/pricing', null, null],
    ]);
    expect(await emitted(org)).toEqual([]);
  });

  it('refuses a bad name or props with 400 naming the field, and stores nothing', async () => {
    const org = await t.newOrg();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: '' }, /^Validation failed: name: must be 1-64 letters/],
      [{ name: 'sign up!' }, /^Validation failed: name: /],
      [{ name: 'x'.repeat(65) }, /^Validation failed: name: /],
      [{ props: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`p${i}`, i])) }, /^Validation failed: props: at most 10 props/],
      [{ props: { plan: { tier: 'pro' } } }, /^Validation failed: props\.plan: each prop must be a string of at most 500 characters/],
      [{ props: { plan: 'x'.repeat(501) } }, /^Validation failed: props\.plan: /],
      [{ props: { 'bad key': 1 } }, /^Validation failed: props\.bad key: a prop name is 1-40/],
      [{ props: ['pro'] }, /^Validation failed: props: /],
    ];
    for (const [extra, message] of cases) {
      const res = await track(t, event(org, extra));
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body, JSON.stringify(extra)).toMatchObject({ code: 'validation_failed', error: expect.stringMatching(message) });
    }
    const big = await track(t, event(org, { props: { a: 'x'.repeat(4100) } }));
    expect(big.status).toBe(413);
    expect(await stored(org)).toEqual([]);
  });

  it('shares the page views’ per-minute budget (429 with retry-after), and answers an unknown organization like a known one', async () => {
    const org = await t.newOrg();
    for (let i = 0; i < LIMIT / 2; i++) expect((await collect(t, { org: org.orgId, url: 'https://shop.example/' })).status).toBe(202);
    for (let i = 0; i < LIMIT / 2; i++) expect((await track(t, event(org))).status).toBe(202);
    const over = await track(t, event(org));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'rate_limited' });
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await stored(org)).toHaveLength(LIMIT / 2);
    expect((await track(t, event(org, { org: '00000000-0000-4000-8000-000000000000' }))).status).toBe(202);
  });
});

describe('the goals report (GET /api/tracking/goals)', () => {
  it('counts the custom events of the period by name, anonymous ones apart, most frequent first', async () => {
    const org = await t.newOrg();
    await contact(org, 'ada@example.com');
    await track(t, event(org, { name: 'old' }));
    t.clock.advance(31 * 86_400_000);
    await track(t, event(org, { visitor: VISITOR_B, name: 'signup' }));
    await track(t, event(org, { visitor: VISITOR_B, name: 'signup' }));
    await track(t, event(org, { email: 'ada@example.com', name: 'signup' }));
    await track(t, event(org, { visitor: VISITOR_B, name: 'video_played' }));
    const r = await internalRest(t, 'GET', '/tracking/goals', org.internalKey);
    expect(r.status).toBe(200);
    expect(r.body.items).toEqual([
      { name: 'signup', total: 3, anonymous: 2 },
      { name: 'video_played', total: 1, anonymous: 1 },
    ]);
    expect((await internalRest(t, 'GET', '/tracking/goals?days=400', org.internalKey)).body.items.map((i: any) => i.name)).toContain('old');
  });
});
