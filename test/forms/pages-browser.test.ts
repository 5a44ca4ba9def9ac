import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { newForm, submissions } from './support.ts';

const CHROMIUM = '/usr/bin/chromium';
/** The service as the browser sees it; every request there is routed to the test server. */
const SERVICE = 'http://forms.leadwire.test';
/** A customer's website on another origin, served by the test itself. */
const CUSTOMER = 'http://www.customer.test';

// Debian's chromium (see stack notes); without it these checks cannot run, the HTTP tests of the pages still do.
describe.skipIf(!existsSync(CHROMIUM))('forms in a browser', () => {
  let t: TestApp;
  let a: TestOrg;
  let browser: Browser;

  beforeAll(async () => {
    t = await initTestApp({ APP_URL: SERVICE, BASE_URL: `${SERVICE}/api` });
    a = await newTestOrg(t);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-sync', '--disable-background-networking',
        '--disable-component-update', '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function contextFor(javaScriptEnabled: boolean, customerPage?: string): Promise<BrowserContext> {
    const context = await browser.newContext({ javaScriptEnabled });
    // Fetched by Playwright and handed back as the service's answer (redirects included), so the page sees a public
    // origin rather than a loopback address (Chromium's private network rules would refuse the customer page that).
    await context.route(`${SERVICE}/**`, async (route) =>
      route.fulfill({ response: await route.fetch({ url: route.request().url().replace(SERVICE, t.origin), maxRedirects: 0 }) }),
    );
    if (customerPage) {
      await context.route(`${CUSTOMER}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: customerPage }));
    }
    return context;
  }

  it('the hosted page without JavaScript: errors tied to their fields and announced, then the thank-you page', async () => {
    const form = await newForm(a.member, { thankYou: { message: 'Thanks, we will be in touch.' } });
    const context = await contextFor(false);
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => void (/Content Security Policy|Refused to/i.test(m.text()) && violations.push(m.text())));
    try {
      await page.goto(`${SERVICE}/f/${form.id}?utm_source=browser-test`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Contact us');
      // `ada@localhost` passes the browser's own email check (not JavaScript) but not the server's.
      await page.getByLabel('Email address (required)').fill('ada@localhost');
      await page.getByLabel('First name').fill('Ada');
      await page.getByLabel('Topic (required)').selectOption('Demo');
      await page.getByLabel('I agree to be contacted (required)').check();
      await page.getByRole('button', { name: 'Send' }).click();
      await page.waitForLoadState();
      expect(await page.getByRole('alert').textContent()).toContain('Email address must be a valid email address');
      const email = page.getByLabel('Email address (required)');
      expect(await email.getAttribute('aria-invalid')).toBe('true');
      const described = (await email.getAttribute('aria-describedby'))!;
      expect(await page.locator(`#${described}`).textContent()).toBe('Email address must be a valid email address');
      expect(await page.getByLabel('First name').inputValue()).toBe('Ada');

      // Targets of at least 24 by 24 CSS pixels (WCAG 2.2 2.5.8), the checkbox included.
      for (const target of [email, page.getByLabel('I agree to be contacted (required)'), page.getByRole('button', { name: 'Send' })]) {
        const box = (await target.boundingBox())!;
        expect(box.width).toBeGreaterThanOrEqual(24);
        expect(box.height).toBeGreaterThanOrEqual(24);
      }
      // Focus is visible: the stylesheet (allowed by its hash) draws an outline on keyboard focus.
      await page.getByLabel('First name').focus();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('lastName');
      expect(await page.locator(':focus').evaluate((el) => getComputedStyle(el).outlineStyle)).toBe('solid');

      await email.fill('ada@example.com');
      await page.getByLabel('I agree to be contacted (required)').check();
      await page.getByRole('button', { name: 'Send' }).click();
      await page.waitForURL(`${SERVICE}/f/${form.id}/thanks`);
      expect(await page.getByRole('status').textContent()).toBe('Thanks, we will be in touch.');
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
    expect(await submissions(t, form.id)).toMatchObject([
      { answers: { email: 'ada@example.com', first_name: 'Ada', topic: 'Demo', consent: true }, attribution: { utm: { source: 'browser-test' }, landingPage: `${SERVICE}/f/${form.id}` } },
    ]);
  }, 60_000);

  it('the loader on another origin inserts the form, re-creates its scripts and adds attribution; the post lands on the thank-you page', async () => {
    const form = await newForm(a.member);
    const captchaForm = await newForm(a.member, { captcha: { provider: 'turnstile', siteKey: 'site', secret: 'secret' } });
    const host = `<!doctype html><html><body><h1>Customer site</h1>
<div data-leadwire-form="${form.id}"></div><div data-leadwire-form="${captchaForm.id}"></div>
<script src="${SERVICE}/api/embed/form-loader.js" async></script></body></html>`;
    const context = await contextFor(true, host);
    const page = await context.newPage();
    const scripts: string[] = [];
    page.on('request', (r) => void (r.resourceType() === 'script' && scripts.push(r.url())));
    try {
      // The tracking snippet's visitor cookie on the customer's site: the loader hands it on with the answers.
      await context.addCookies([{ name: 'lw_vid', value: 'vis_loader_browser_01', url: CUSTOMER }]);
      await page.goto(`${CUSTOMER}/landing?utm_source=partner&utm_medium=embed`);
      const embedded = page.locator(`form[data-leadwire-form="${form.id}"]`);
      await embedded.waitFor();
      // The CAPTCHA script of the second form was re-created, so the browser asked for it.
      await page.locator(`form[data-leadwire-form="${captchaForm.id}"]`).waitFor();
      await expect.poll(() => scripts).toContain('https://challenges.cloudflare.com/turnstile/v0/api.js');
      expect(await embedded.locator('input[name="utm_source"]').getAttribute('value')).toBe('partner');
      expect(await embedded.locator('input[name="_landingPage"]').getAttribute('value')).toBe(`${CUSTOMER}/landing?utm_source=partner&utm_medium=embed`);
      expect(await embedded.locator('input[name="_visitor"]').getAttribute('value')).toBe('vis_loader_browser_01');

      await embedded.getByLabel('Email address (required)').fill('embed@example.com');
      await embedded.getByLabel('Topic (required)').selectOption('Pricing');
      await embedded.getByLabel('I agree to be contacted (required)').check();
      await embedded.getByRole('button', { name: 'Send' }).click();
      await page.waitForURL(`${SERVICE}/f/${form.id}/thanks`);
    } finally {
      await context.close();
    }
    expect(await submissions(t, form.id)).toMatchObject([
      { answers: { email: 'embed@example.com', topic: 'Pricing', consent: true }, attribution: { utm: { source: 'partner', medium: 'embed' }, landingPage: `${CUSTOMER}/landing?utm_source=partner&utm_medium=embed` } },
    ]);
    const [visitor] = await t.sql<{ email: string }>(
      'select c.email from tracking_visitors v join contacts c on c.id = v.contact_id where v.organization_id = ? and v.visitor_id = ?',
      [a.orgId, 'vis_loader_browser_01'],
    );
    expect(visitor).toEqual({ email: 'embed@example.com' });
  }, 60_000);
});
