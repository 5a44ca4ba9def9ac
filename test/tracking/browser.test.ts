import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import type { TestApp } from '../support/app.ts';
import { hasChromium, sharedChromium } from '../support/chromium.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { expectSigned, insertEndpoint, startDeliveringApp } from '../webhooks/delivery/support.ts';
import { pageViews, trackingEvents } from './support.ts';

/**
 * The snippet end to end: a website on one origin (a second local server) pastes the script served by the API on
 * another, a real browser runs it, the rows land in PostgreSQL and the known contact's page view reaches a webhook
 * receiver, signed.
 */

/** A website that pastes the snippet twice (as happens when a theme and a tag manager both add it). */
function sitePage(api: string, orgId: string, title: string): string {
  const snippet = `<script async src="${api}/api/embed/tracking.js" data-org="${orgId}"></script>`;
  return `<!doctype html><html><head><title>${title}</title>${snippet}</head>
<body><h1>${title}</h1><a id="spa" href="/app/settings">Settings</a>${snippet}
<script>document.getElementById('spa').addEventListener('click', (e) => { e.preventDefault(); document.title = 'Settings'; history.pushState({}, '', '/app/settings'); });</script>
</body></html>`;
}

async function startSite(api: string, orgId: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(sitePage(api, orgId, path === '/' ? 'Home' : path.slice(1)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/**
 * A page using custom events: the docs' one-line stub and a call before the snippet (async, so it loads later), and a
 * button that calls `leadwire.track` once it has.
 */
function eventsPage(api: string, orgId: string): string {
  return `<!doctype html><html><head><title>Pricing</title>
<script>window.leadwire=window.leadwire||{q:[],track:function(){this.q.push(arguments)}}</script>
<script>leadwire.track('signup', { plan: 'pro' })</script>
<script async src="${api}/api/embed/tracking.js" data-org="${orgId}"></script>
</head><body><button id="buy">Buy</button>
<script>document.getElementById('buy').addEventListener('click', () => leadwire.track('signup', { plan: 'max' }));</script>
</body></html>`;
}

async function startEventsSite(api: string, orgId: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(eventsPage(api, orgId));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const customEvents = (t: TestApp, orgId: string) =>
  t.sql<{ name: string; props: Record<string, unknown>; visitor_id: string | null; contact_id: string | null; url: string }>(
    'select name, props, visitor_id, contact_id, url from tracking_events where organization_id = ? order by created_at, id',
    [orgId],
  );

/** Waits (polling the database) until the organization has `n` page views; fails after a few seconds. */
async function untilViews(t: TestApp, orgId: string, n: number) {
  await expect.poll(async () => (await pageViews(t, orgId)).length, { timeout: 10_000, interval: 50 }).toBe(n);
  return pageViews(t, orgId);
}

describe.skipIf(!hasChromium)('the tracking snippet in Chromium, on a site of another origin', () => {
  let t: TestApp;
  let org: TestOrg;
  let site: { origin: string; server: Server };
  let browser: Browser;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await startReceiver();
    t = await startDeliveringApp();
    org = await newTestOrg(t);
    site = await startSite(t.origin, org.orgId);
    // The run's browser is a visitor's: navigator.webdriver, which the snippet obeys, is off (see test/support/chromium.ts).
    browser = await sharedChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.server.close(resolve));
    await t?.close();
    await rx?.close();
  });

  /** Requests the page sent to the collect endpoint, in the order it sent them. */
  function collectRequests(page: Page): string[] {
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.url() === `${t.origin}/api/track/pageview`) sent.push(r.postData() ?? '');
    });
    return sent;
  }

  it('records one view for a page pasting the snippet twice, then one per SPA navigation, and remembers the visitor', async () => {
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/tracking`, { events: ['tracking.page_visited'] });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const sent = collectRequests(page);
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${site.origin}/`);
      await untilViews(t, org.orgId, 1);
      await page.click('#spa');
      // The navigation's view is sent after the load's: once it is stored, a duplicate load view would have been too.
      const rows = await untilViews(t, org.orgId, 2);
      expect(sent).toHaveLength(2);
      expect(rows.map((r) => [r.url, r.referrer, r.title])).toEqual([
        [`${site.origin}/`, null, 'Home'],
        [`${site.origin}/app/settings`, `${site.origin}/`, 'Settings'],
      ]);
      const visitor = rows[0]!.visitor_id;
      expect(visitor).toMatch(/^[0-9a-z]{28}$/);
      expect(rows[1]!.visitor_id).toBe(visitor);
      // The same path again is not a new page.
      await page.evaluate(() => history.pushState({}, '', '/app/settings?tab=2'));
      expect(await page.evaluate(() => Object.keys(window).filter((k) => k.startsWith('__leadwire') || k === 'leadwire'))).toEqual([
        '__leadwireTracking',
        'leadwire',
      ]);
      expect(errors).toEqual([]);

      const cookies = await context.cookies(site.origin);
      expect(cookies.find((c) => c.name === 'lw_vid')).toMatchObject({ value: visitor, sameSite: 'Lax', httpOnly: false, path: '/' });

      // Back over both entries to the home page: popstate counts (the entry in between has the same path, so it would not).
      await page.evaluate(() => history.go(-2));
      expect((await untilViews(t, org.orgId, 3))[2]!.url).toBe(`${site.origin}/`);
      // A later page load in the same browser carries the same visitor, now identified by ?email=.
      const contact = await org.owner.contacts.create.mutate({ email: 'browser@shop.example', firstName: 'Bea' });
      await page.goto(`${site.origin}/welcome?email=browser%40shop.example`);
      const all = await untilViews(t, org.orgId, 4);
      expect(all.every((r) => r.visitor_id === visitor)).toBe(true);
      // Identified: the earlier anonymous views of this browser are hers too.
      expect(all.map((r) => r.contact_id)).toEqual([contact.id, contact.id, contact.id, contact.id]);
      expect(all[3]!.url).toBe(`${site.origin}/welcome`);
      expect((await trackingEvents(t, org.orgId)).map((e) => [e.data.visit.url, e.data.contact.id])).toEqual([
        [`${site.origin}/welcome`, contact.id],
      ]);
      // ...and is delivered, signed, to the endpoint subscribed to it.
      const [delivered] = await rx.waitFor(1);
      expectSigned(delivered!, endpoint.secret);
      expect(delivered!.headers['x-webhook-event']).toBe('tracking.page_visited');
      expect(JSON.parse(delivered!.rawBody.toString())).toMatchObject({
        event: 'tracking.page_visited',
        data: { visit: { url: `${site.origin}/welcome` }, contact: { id: contact.id } },
      });
    } finally {
      await context.close();
    }
  });

  it('sends leadwire.track calls made before and after the snippet loaded, each once; a known visitor’s reach the feed', async () => {
    const shop = await newTestOrg(t);
    const shopSite = await startEventsSite(t.origin, shop.orgId);
    const context = await browser.newContext();
    try {
      const contact = await shop.owner.contacts.create.mutate({ email: 'events@shop.example', firstName: 'Eve' });
      const page = await context.newPage();
      const sent: string[] = [];
      page.on('request', (r) => void (r.url() === `${t.origin}/api/track/event` && sent.push(r.postData() ?? '')));
      await page.goto(`${shopSite.origin}/pricing?email=events%40shop.example`);
      await expect.poll(async () => (await customEvents(t, shop.orgId)).length, { timeout: 10_000, interval: 50 }).toBe(1);
      expect(await page.evaluate(() => 'q' in (window as unknown as { leadwire: object }).leadwire)).toBe(false);
      await page.click('#buy');
      await expect.poll(async () => (await customEvents(t, shop.orgId)).length, { timeout: 10_000, interval: 50 }).toBe(2);
      const rows = await customEvents(t, shop.orgId);
      expect(rows.map((r) => [r.name, r.props, r.contact_id, r.url])).toEqual([
        ['signup', { plan: 'pro' }, contact.id, `${shopSite.origin}/pricing`],
        ['signup', { plan: 'max' }, contact.id, `${shopSite.origin}/pricing`],
      ]);
      expect(sent).toHaveLength(2);
      type Item = { data: { customEvent: { props: unknown }; contact: { id: string } } };
      const feed = async () => {
        const res = await fetch(`${t.origin}/api/v1/events?types=tracking.custom_event`, {
          headers: { authorization: `Bearer ${shop.publicKey}` },
        });
        return ((await res.json()) as { items: Item[] }).items;
      };
      // The feed shows an event once no older transaction of the cluster is still running: other files' may be.
      await expect.poll(async () => (await feed()).length, { timeout: 30_000, interval: 50 }).toBe(2);
      const items = await feed();
      expect(items.map((e) => [e.data.customEvent.props, e.data.contact.id])).toEqual([
        [{ plan: 'pro' }, contact.id],
        [{ plan: 'max' }, contact.id],
      ]);
    } finally {
      await context.close();
      await new Promise((resolve) => shopSite.server.close(resolve));
    }
  });

  it('sends custom events of a Global Privacy Control visitor without any identity', async () => {
    const shop = await newTestOrg(t);
    const shopSite = await startEventsSite(t.origin, shop.orgId);
    const context = await browser.newContext();
    try {
      await shop.owner.contacts.create.mutate({ email: 'private@shop.example' });
      await context.addInitScript(() => Object.defineProperty(navigator, 'globalPrivacyControl', { get: () => true }));
      const page = await context.newPage();
      const sent: string[] = [];
      page.on('request', (r) => void (r.url() === `${t.origin}/api/track/event` && sent.push(r.postData() ?? '')));
      await page.goto(`${shopSite.origin}/pricing?email=private%40shop.example`);
      await expect.poll(async () => (await customEvents(t, shop.orgId)).length, { timeout: 10_000, interval: 50 }).toBe(1);
      expect(sent.map((b) => JSON.parse(b) as Record<string, unknown>)).toEqual([
        { org: shop.orgId, url: `${shopSite.origin}/pricing`, name: 'signup', props: { plan: 'pro' } },
      ]);
      expect((await customEvents(t, shop.orgId)).map((r) => [r.visitor_id, r.contact_id])).toEqual([[null, null]]);
      expect((await context.cookies(shopSite.origin)).find((c) => c.name === 'lw_vid')).toBeUndefined();
    } finally {
      await context.close();
      await new Promise((resolve) => shopSite.server.close(resolve));
    }
  });

  it('sends nothing from a browser that says it is automated', async () => {
    const quiet = await newTestOrg(t);
    const quietSite = await startSite(t.origin, quiet.orgId);
    const context = await browser.newContext();
    try {
      await context.addInitScript(() => Object.defineProperty(navigator, 'webdriver', { get: () => true }));
      const page = await context.newPage();
      const sent = collectRequests(page);
      // The load event waits for async scripts: once goto returns, both copies of the snippet have run.
      await page.goto(`${quietSite.origin}/`);
      const loaded = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name));
      expect(loaded).toContain(`${t.origin}/api/embed/tracking.js`);
      expect(await page.evaluate(() => '__leadwireTracking' in window)).toBe(false);
      expect(sent).toEqual([]);
      expect(await pageViews(t, quiet.orgId)).toEqual([]);
    } finally {
      await context.close();
      await new Promise((resolve) => quietSite.server.close(resolve));
    }
  });
});
