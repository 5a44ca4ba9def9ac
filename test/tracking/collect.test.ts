import { randomUUID } from 'node:crypto';
import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newTestOrg, rest, type TestOrg } from '../internal/contacts-support.ts';
import { initTestApp, type TestApp } from '../support/app.ts';
import { collect, pageViews, trackingEvents, VISITOR_A, VISITOR_B } from './support.ts';

const LIMIT = 10;

let t: TestApp;
let a: TestOrg;
let b: TestOrg;
beforeAll(async () => {
  t = await initTestApp({ TRACKING_PAGE_VIEWS_PER_MINUTE: String(LIMIT) });
  a = await newTestOrg(t);
  b = await newTestOrg(t);
});
afterAll(async () => {
  await t?.close();
});
// Every test starts in a fresh one-minute window of the per-organization limit.
beforeEach(() => t.clock.advance(60_000));

const view = (org: string, extra: Record<string, unknown> = {}) => ({
  org,
  url: 'https://shop.example/pricing',
  referrer: 'https://www.google.com/',
  title: 'Pricing',
  visitor: VISITOR_A,
  ...extra,
});

async function viewsOf(org: TestOrg) {
  return pageViews(t, org.orgId);
}

describe('POST /api/track/pageview', () => {
  it('stores an anonymous page view sent as text/plain: 202, no body, any origin, the server clock time', async () => {
    const org = await newTestOrg(t);
    t.clock.freeze(new Date('2026-12-01T10:00:00.000Z'));
    try {
      const res = await collect(t, view(org.orgId));
      expect(res.status).toBe(202);
      expect(res.body).toBe('');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    } finally {
      t.clock.unfreeze();
    }
    expect((await viewsOf(org)).map((v) => ({ ...v, created_at: new Date(v.created_at) }))).toEqual([
      {
        url: 'https://shop.example/pricing',
        referrer: 'https://www.google.com/',
        title: 'Pricing',
        visitor_id: VISITOR_A,
        contact_id: null,
        created_at: new Date('2026-12-01T10:00:00.000Z'),
      },
    ]);
    expect(await trackingEvents(t, org.orgId)).toEqual([]);
  });

  it('takes application/json too, and answers its preflight for any origin without credentials', async () => {
    const org = await newTestOrg(t);
    const pre = await fetch(`${t.origin}/api/track/pageview`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type');
    expect(
      (await collect(t, view(org.orgId, { referrer: null, title: null, visitor: undefined }), { 'content-type': 'application/json' }))
        .status,
    ).toBe(202);
    expect(await viewsOf(org)).toMatchObject([{ referrer: null, title: null, visitor_id: null }]);
  });

  it('identifies a visitor by ?email=: the contact gets the view and tracking.page_visited, the browser is remembered', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'ada@shop.example', firstName: 'Ada' });
    const visitor = `v${randomUUID().replaceAll('-', '')}`;
    const first = view(a.orgId, {
      url: 'https://shop.example/offer?email=Ada%40Shop.example&utm_source=mail',
      email: 'ADA@shop.example',
      visitor,
    });
    expect((await collect(t, first)).status).toBe(202);
    // A later view from the same browser, without ?email=, is still hers.
    expect(
      (
        await collect(
          t,
          view(a.orgId, { url: 'https://shop.example/pricing', referrer: 'https://shop.example/offer?email=Ada%40Shop.example', visitor }),
        )
      ).status,
    ).toBe(202);
    const mine = (await viewsOf(a)).filter((v) => v.visitor_id === visitor);
    expect(mine.map((v) => [v.url, v.referrer, v.contact_id])).toEqual([
      // The identifying parameter is not kept in stored addresses; the contact it named is.
      ['https://shop.example/offer?utm_source=mail', 'https://www.google.com/', c.id],
      ['https://shop.example/pricing', 'https://shop.example/offer', c.id],
    ]);
    const events = (await trackingEvents(t, a.orgId)).filter((e) => e.data.visit.visitorId === visitor);
    expect(events).toEqual([
      {
        id: expect.any(String),
        event: 'tracking.page_visited',
        timestamp: expect.any(String),
        source: 'inbound',
        data: {
          visit: {
            url: 'https://shop.example/offer?utm_source=mail',
            title: 'Pricing',
            referrer: 'https://www.google.com/',
            visitorId: visitor,
          },
          contact: { id: c.id, firstName: 'Ada', email: 'ada@shop.example' },
        },
      },
      expect.objectContaining({
        data: expect.objectContaining({ visit: expect.objectContaining({ url: 'https://shop.example/pricing' }) }),
      }),
    ]);
    // Each payload is exactly what the event catalogue describes (nothing more, nothing less).
    for (const e of events) expect(EVENT_CATALOGUE['tracking.page_visited'].payload.parse(e)).toEqual(e);
  });

  it("identifies by ?c=<contact id> and attaches the visitor's earlier anonymous views (no events for those)", async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'grace@shop.example', firstName: 'Grace' });
    const visitor = `v${randomUUID().replaceAll('-', '')}`;
    await collect(t, view(a.orgId, { url: 'https://shop.example/', visitor }));
    await collect(t, view(a.orgId, { url: 'https://shop.example/blog', visitor }));
    expect((await viewsOf(a)).filter((v) => v.visitor_id === visitor).map((v) => v.contact_id)).toEqual([null, null]);
    await collect(t, view(a.orgId, { url: `https://shop.example/demo?c=${c.id}`, contactId: c.id.toUpperCase(), visitor }));
    const mine = (await viewsOf(a)).filter((v) => v.visitor_id === visitor);
    expect(mine.map((v) => [v.url, v.contact_id])).toEqual([
      ['https://shop.example/', c.id],
      ['https://shop.example/blog', c.id],
      ['https://shop.example/demo', c.id],
    ]);
    expect((await trackingEvents(t, a.orgId)).filter((e) => e.data.visit.visitorId === visitor).map((e) => e.data.visit.url)).toEqual([
      'https://shop.example/demo',
    ]);

    // The contact's timeline shows the three views, once each (not also as events).
    const timeline = await a.owner.contacts.timeline.query({ id: c.id });
    const items = timeline.items.filter((i) => i.kind === 'page_view' || (i.kind === 'event' && i.event === 'tracking.page_visited'));
    expect(items.map((i) => (i.kind === 'page_view' ? [i.kind, i.url, i.title, i.referrer] : [i.kind]))).toEqual([
      ['page_view', 'https://shop.example/demo', 'Pricing', 'https://www.google.com/'],
      ['page_view', 'https://shop.example/blog', 'Pricing', 'https://www.google.com/'],
      ['page_view', 'https://shop.example/', 'Pricing', 'https://www.google.com/'],
    ]);
    // And over REST, the same items.
    const restTimeline = await rest(t, 'GET', `/contacts/${c.id}/timeline`, a.ownerKey);
    expect(restTimeline.body.items.filter((i: any) => i.kind === 'page_view')).toHaveLength(3);
  });

  it('leaves the visit anonymous for an unknown email, a trashed or foreign contact, or a ?c= that is no contact id', async () => {
    const foreign = await b.owner.contacts.create.mutate({ email: 'foreign@shop.example' });
    const trashed = await a.owner.contacts.create.mutate({ email: 'trashed@shop.example' });
    await a.owner.contacts.delete.mutate({ id: trashed.id });
    const visitor = `v${randomUUID().replaceAll('-', '')}`;
    for (const identity of [
      { email: 'nobody@shop.example' },
      { email: 'foreign@shop.example' },
      { contactId: foreign.id },
      { contactId: trashed.id },
      { email: 'trashed@shop.example' },
      { contactId: 'blue' },
      { email: 'not an email' },
    ]) {
      expect((await collect(t, view(a.orgId, { ...identity, visitor }))).status, JSON.stringify(identity)).toBe(202);
    }
    const mine = (await viewsOf(a)).filter((v) => v.visitor_id === visitor);
    expect(mine).toHaveLength(7);
    expect(mine.every((v) => v.contact_id === null)).toBe(true);
    expect(await t.sql('select 1 from tracking_visitors where visitor_id = ?', [visitor])).toEqual([]);
    expect((await viewsOf(b)).filter((v) => v.visitor_id === visitor)).toEqual([]);
  });

  it('ignores identification without a visitor id: there is no browser to remember', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'novisitor@shop.example' });
    expect(
      (await collect(t, view(a.orgId, { visitor: null, email: 'novisitor@shop.example', url: 'https://shop.example/nv' }))).status,
    ).toBe(202);
    expect((await viewsOf(a)).find((v) => v.url === 'https://shop.example/nv')).toMatchObject({ contact_id: null, visitor_id: null });
    expect((await trackingEvents(t, a.orgId)).filter((e) => e.data.contact.id === c.id)).toEqual([]);
  });

  for (const [name, header] of [
    ['Sec-GPC: 1', { 'sec-gpc': '1' }],
    ['DNT: 1', { dnt: '1' }],
  ] as const) {
    it(`keeps an anonymous count only when the request says ${name}, whatever the body holds`, async () => {
      const org = await newTestOrg(t);
      await org.owner.contacts.create.mutate({ email: 'private@shop.example' });
      const res = await collect(
        t,
        view(org.orgId, { url: 'https://shop.example/offer?email=private%40shop.example#x', email: 'private@shop.example' }),
        header,
      );
      expect(res.status).toBe(202);
      expect(await viewsOf(org)).toMatchObject([
        { url: 'https://shop.example/offer', referrer: null, title: 'Pricing', visitor_id: null, contact_id: null },
      ]);
      expect(await trackingEvents(t, org.orgId)).toEqual([]);
    });
  }

  it('answers an unknown organization like a known one, storing and counting nothing', async () => {
    const unknown = randomUUID();
    const res = await collect(t, view(unknown));
    expect(res.status).toBe(202);
    expect(res.body).toBe('');
    expect(await t.sql('select 1 from page_views where organization_id = ?', [unknown])).toEqual([]);
    expect(await t.sql('select 1 from rate_limit_counters where bucket = ?', [`track:${unknown}`])).toEqual([]);
  });
});

describe('refusals', () => {
  const cases: [string, () => { body: unknown; headers?: Record<string, string> }, number, string, string?][] = [
    ['not JSON', () => ({ body: '{"org":' }), 400, 'malformed_json'],
    ['empty', () => ({ body: '' }), 400, 'malformed_json'],
    ['not UTF-8', () => ({ body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]) }), 400, 'malformed_json'],
    ['a JSON array', () => ({ body: '[]' }), 400, 'validation_failed'],
    ['no org', () => ({ body: { url: 'https://shop.example/' } }), 400, 'validation_failed', 'org'],
    ['an org that is not a UUID', () => ({ body: { org: "1' or '1'='1", url: 'https://shop.example/' } }), 400, 'validation_failed', 'org'],
    ['a javascript: URL', () => ({ body: { org: a.orgId, url: 'javascript:alert(1)' } }), 400, 'validation_failed', 'url'],
    ['a line break in the URL', () => ({ body: { org: a.orgId, url: 'https://shop.example/a\r\nb' } }), 400, 'validation_failed', 'url'],
    ['a C1 control in the URL', () => ({ body: { org: a.orgId, url: 'https://shop.example/a\u0085b' } }), 400, 'validation_failed', 'url'],
    [
      'a URL over 2,048 characters',
      () => ({ body: { org: a.orgId, url: `https://shop.example/${'a'.repeat(2048)}` } }),
      400,
      'validation_failed',
      'url',
    ],
    [
      'a visitor id with odd characters',
      () => ({ body: { org: a.orgId, url: 'https://shop.example/', visitor: '<script>alert(1)</script>' } }),
      400,
      'validation_failed',
      'visitor',
    ],
    [
      'a NUL in the title',
      () => ({ body: { org: a.orgId, url: 'https://shop.example/', title: 'a\u0000b' } }),
      400,
      'validation_failed',
      'title',
    ],
    [
      'a body over 8 KB',
      () => ({ body: { org: a.orgId, url: 'https://shop.example/', title: 'x'.repeat(9000) } }),
      413,
      'payload_too_large',
    ],
    [
      'a form post',
      () => ({ body: 'org=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    ],
    [
      'another charset',
      () => ({ body: { org: a.orgId, url: 'https://shop.example/' }, headers: { 'content-type': 'text/plain; charset=iso-8859-1' } }),
      415,
      'unsupported_media_type',
    ],
    [
      'a compressed body',
      () => ({ body: { org: a.orgId, url: 'https://shop.example/' }, headers: { 'content-encoding': 'gzip' } }),
      415,
      'unsupported_content_encoding',
    ],
  ];
  for (const [name, make, status, code, path] of cases) {
    it(`refuses ${name}: ${status} ${code}, nothing stored`, async () => {
      const before = (await viewsOf(a)).length;
      const { body, headers } = make();
      const res = await collect(t, body, headers);
      expect(res.status).toBe(status);
      expect(res.body).toMatchObject({ error: expect.any(String), code });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      if (path) expect(res.body.issues.map((i: { path: string }) => i.path)).toContain(path);
      expect((await viewsOf(a)).length).toBe(before);
    });
  }

  it(`limits each organization to ${LIMIT} page views a minute (429 with retry-after), without touching others`, async () => {
    const org = await newTestOrg(t);
    const other = await newTestOrg(t);
    t.clock.freeze(new Date('2026-12-02T09:30:10.000Z'));
    try {
      for (let i = 0; i < LIMIT; i++) expect((await collect(t, view(org.orgId, { url: `https://shop.example/${i}` }))).status).toBe(202);
      const refused = await collect(t, view(org.orgId, { url: 'https://shop.example/over' }));
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'rate_limited' });
      expect(refused.headers.get('retry-after')).toBe('50');
      expect(refused.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      expect((await collect(t, view(other.orgId, { visitor: VISITOR_B }))).status).toBe(202);
      // The next minute has a new allowance.
      t.clock.advance(50_000);
      expect((await collect(t, view(org.orgId, { url: 'https://shop.example/next-minute' }))).status).toBe(202);
    } finally {
      t.clock.unfreeze();
    }
    const urls = (await viewsOf(org)).map((v) => v.url);
    expect(urls).toHaveLength(LIMIT + 1);
    expect(urls).not.toContain('https://shop.example/over');
    expect(urls).toContain('https://shop.example/next-minute');
  });
});
