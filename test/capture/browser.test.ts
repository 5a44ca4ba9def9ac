import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import type { TestApp } from '../support/app.ts';
import { hasChromium, sharedChromium } from '../support/chromium.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { pageViews } from '../tracking/support.ts';
import { expectSigned, insertEndpoint, startDeliveringApp, waitForLog } from '../webhooks/delivery/support.ts';
import { captureSubmissions, formSubmittedEvents } from './support.ts';

/**
 * The lead-capture script end to end: a website on one origin (a second local server) pastes the script (and the
 * tracking snippet) served by the API on another; a real browser fills the universal form and a plain form that posts
 * to the website itself; the rows land in PostgreSQL and the events reach an HTTPS receiver, signed.
 */

function sitePage(api: string, orgId: string): string {
  return `<!doctype html><html lang="en"><head><title>Contact</title>
<script async src="${api}/api/embed/lead-capture.js" data-org="${orgId}"></script>
<script async src="${api}/api/embed/tracking.js" data-org="${orgId}"></script></head>
<body><h1>Contact</h1><div data-leadwire-lead-capture></div>
<h2>Newsletter</h2>
<form id="signup" action="/subscribe" method="post" data-form-name="Newsletter">
<label>Full name <input name="fullName"></label><label>Your email <input type="email" name="EMAIL" required></label>
<input type="hidden" name="_token" value="csrf-secret"><button>Subscribe</button></form></body></html>`;
}

interface Site {
  origin: string;
  server: Server;
  posts: string[];
}

async function startSite(api: string, orgId: string): Promise<Site> {
  const posts: string[] = [];
  const server = createServer((req, res) => {
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        posts.push(`${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Subscribed</title><p>Subscribed</p>');
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(sitePage(api, orgId));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, posts };
}

describe.skipIf(!hasChromium)('the lead-capture script in Chromium, on a site of another origin', () => {
  let t: TestApp;
  let org: TestOrg;
  let site: Site;
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

  it('captures the universal form and a plain form that still submits to its own action; events delivered signed', async () => {
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/leads`, { events: ['form.submitted'] });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${site.origin}/contact?utm_source=e2e`);
      await expect.poll(async () => (await pageViews(t, org.orgId)).length, { timeout: 10_000, interval: 50 }).toBe(1);

      // The universal form, by its labels, as a person with a keyboard uses it.
      await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const e = document.activeElement as HTMLElement;
        return { name: e.getAttribute('name'), outline: getComputedStyle(e).outlineWidth };
      });
      expect(focused).toEqual({ name: 'email', outline: '3px' });
      for (const target of ['form.lw-lc button', 'form.lw-lc input[name=email]']) {
        expect((await page.locator(target).boundingBox())!.height).toBeGreaterThanOrEqual(24);
      }
      await page.keyboard.type('ada@example.com');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect
        .poll(() => page.getByRole('status').textContent(), { timeout: 10_000 })
        .toBe('Thank you! Your answers have been received.');

      const [contact] = await t.sql<{ id: string; source: string; first_name: string }>(
        `select id, source, first_name from contacts where organization_id = ? and email = ?`,
        [org.orgId, 'ada@example.com'],
      );
      expect(contact).toMatchObject({ source: 'form', first_name: 'Ada' });
      // The page view the tracking snippet sent from this browser is hers now.
      expect((await pageViews(t, org.orgId)).map((v) => v.contact_id)).toEqual([contact!.id]);

      // The plain form: captured, and it still posts to the website.
      await page.getByLabel('Full name').fill('Grace Hopper');
      await page.getByLabel('Your email').fill('grace@example.com');
      await Promise.all([page.waitForURL(`${site.origin}/subscribe`), page.getByRole('button', { name: 'Subscribe' }).click()]);
      expect(await page.textContent('p')).toBe('Subscribed');
      expect(site.posts).toEqual(['/subscribe fullName=Grace+Hopper&EMAIL=grace%40example.com&_token=csrf-secret']);
      await expect.poll(async () => (await captureSubmissions(t, org.orgId)).length, { timeout: 10_000, interval: 50 }).toBe(2);

      const subs = await captureSubmissions(t, org.orgId);
      expect(subs.map((s) => [s.form_name, s.answers, s.attribution.utm])).toEqual([
        ['Universal lead capture', { name: 'Ada Lovelace', email: 'ada@example.com' }, { source: 'e2e' }],
        ['Newsletter', { email: 'grace@example.com', fullName: 'Grace Hopper' }, { source: 'e2e' }],
      ]);
      const [grace] = await t.sql<{ source: string; first_name: string; last_name: string }>(
        `select source, first_name, last_name from contacts where organization_id = ? and email = ?`,
        [org.orgId, 'grace@example.com'],
      );
      expect(grace).toMatchObject({ source: 'form', first_name: 'Grace', last_name: 'Hopper' });
      const events = await formSubmittedEvents(t, org.orgId);
      expect(events.map((e) => e.data.form.name)).toEqual(['Universal lead capture', 'Newsletter']);

      // Both delivered to the HTTPS receiver, signed, in the catalogue's shape.
      const log = await waitForLog(t, endpoint.id, 2);
      expect(log.map((l) => l.outcome)).toEqual(['succeeded', 'succeeded']);
      const delivered = rx.requests.filter((r) => r.url === '/leads');
      expect(delivered).toHaveLength(2);
      for (const req of delivered) {
        expectSigned(req, endpoint.secret);
        const payload = JSON.parse(req.rawBody.toString('utf8'));
        expect(EVENT_CATALOGUE['form.submitted'].payload.parse(payload)).toEqual(payload);
      }
      expect(delivered.map((r) => JSON.parse(r.rawBody.toString('utf8')).data.contact.email).sort()).toEqual([
        'ada@example.com',
        'grace@example.com',
      ]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
