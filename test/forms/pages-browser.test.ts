import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { hasChromium, type PublicOrigin, publicOrigin, sharedChromium } from '../support/chromium.ts';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { type FakeCaptcha, newForm, startFakeCaptcha, submissions } from './support.ts';

/** The service as the browser sees it, answered by the test server (publicOrigin). */
const SERVICE = 'http://forms.leadwire.test';
/** A customer's website on another origin, served by the test itself. */
const CUSTOMER = 'http://www.customer.test';
const SECRETS = { hcaptcha: '0x-hcaptcha-secret', recaptcha: '6Lc-recaptcha-secret' };

/*
 * Stand-ins for the providers' scripts, served at their real addresses, with their documented API. They hand out the
 * token the fake verify endpoint accepts only when called the documented way (an invisible widget of the form's site
 * key, its widget id; v3 execute with the site key and an action), so the token reaching the server proves the call.
 */
const FAKE_PROVIDER = {
  hcaptcha: {
    url: (u: URL) => u.origin + u.pathname === 'https://js.hcaptcha.com/1/api.js',
    body: `window.hcaptcha = { widgets: [],
  render: function (el, o) { this.widgets.push({ el: el, o: o }); return 'w' + (this.widgets.length - 1); },
  execute: function (id) { var w = this.widgets[Number(String(id).slice(1))];
    var ok = w && w.o.sitekey === 'site-hcaptcha' && w.o.size === 'invisible' && w.el.getAttribute('data-size') === 'invisible';
    setTimeout(function () { w.o.callback(ok ? 'good-token' : 'bad-token'); }, 50); } };
var onload = new URL(document.currentScript.src).searchParams.get('onload'); if (onload) window[onload]();`,
  },
  recaptcha: {
    url: (u: URL) => u.origin + u.pathname === 'https://www.google.com/recaptcha/api.js',
    body: `window.grecaptcha = { ready: function (cb) { setTimeout(cb, 0); },
  execute: function (key, o) { return new Promise(function (resolve) {
    setTimeout(function () { resolve(key === 'site-recaptcha' && o.action === 'submit' ? 'good-token' : 'bad-token'); }, 50); }); } };`,
  },
};

// The run's Chromium (test/support/chromium.ts); without it these checks cannot run, the HTTP tests of the pages still do.
describe.skipIf(!hasChromium)('forms in a browser', () => {
  let t: TestApp;
  let a: TestOrg;
  let browser: Browser;
  let fake: FakeCaptcha;
  // The service at a public origin, so the customer's page (public too) may load from it: Chromium's private network
  // rules refuse a public page what comes from a loopback address.
  let service: PublicOrigin;

  beforeAll(async () => {
    fake = await startFakeCaptcha(SECRETS);
    t = await initTestApp({
      APP_URL: SERVICE,
      BASE_URL: `${SERVICE}/api`,
      CAPTCHA_HCAPTCHA_VERIFY_URL: `${fake.url}/hcaptcha`,
      CAPTCHA_RECAPTCHA_VERIFY_URL: `${fake.url}/recaptcha`,
    });
    a = await newTestOrg(t);
    browser = await sharedChromium();
    service = await publicOrigin(SERVICE, t.origin);
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await t?.close();
    await fake?.close();
  });

  async function contextFor(
    javaScriptEnabled: boolean,
    customerPage?: string,
    provider?: keyof typeof FAKE_PROVIDER,
  ): Promise<BrowserContext> {
    const context = await browser.newContext({ javaScriptEnabled, proxy: service.proxy });
    if (provider) {
      const fakeScript = FAKE_PROVIDER[provider];
      await context.route(fakeScript.url, (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: fakeScript.body }));
    }
    if (customerPage) {
      await context.route(`${CUSTOMER}/**`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: customerPage }),
      );
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
      {
        answers: { email: 'ada@example.com', first_name: 'Ada', topic: 'Demo', consent: true },
        attribution: { utm: { source: 'browser-test' }, landingPage: `${SERVICE}/f/${form.id}` },
      },
    ]);
  }, 60_000);

  it.each(['hcaptcha', 'recaptcha'] as const)(
    'the hosted page with %s: submitting runs the invisible check, the token reaches the server, answered by the thank-you redirect',
    async (provider) => {
      const form = await newForm(a.member, { captcha: { provider, siteKey: `site-${provider}`, secret: SECRETS[provider] } });
      const context = await contextFor(true, undefined, provider);
      const page = await context.newPage();
      const scripts: string[] = [];
      page.on('requestfinished', (r) => void (r.resourceType() === 'script' && scripts.push(r.url())));
      const problems: string[] = [];
      page.on('console', (m) => void (/Content Security Policy|Refused to/i.test(m.text()) && problems.push(m.text())));
      page.on('pageerror', (err) => void problems.push(err.message));
      const posts: string[] = [];
      page.on('requestfinished', (r) => void (r.method() === 'POST' && posts.push(r.postData() ?? '')));
      try {
        await page.goto(`${SERVICE}/f/${form.id}`);
        await expect.poll(() => scripts).toHaveLength(1);
        // No visible widget: nothing to tick or solve.
        expect(await page.locator('iframe, .g-recaptcha').count()).toBe(0);
        await page.getByLabel('Email address (required)').fill(`${provider}@example.com`);
        await page.getByLabel('Topic (required)').selectOption('Demo');
        await page.getByLabel('I agree to be contacted (required)').check();
        const answered = page.waitForResponse((r) => r.request().method() === 'POST');
        await page.getByRole('button', { name: 'Send' }).click();
        // The thank-you redirect the browser follows. Playwright's routing does not catch the redirect of a navigation a
        // script started (form.submit()), so the followed request would leave for the unresolvable test host: the 303 is
        // what is checked here, the thank-you page itself in the tests above.
        const res = await answered;
        expect(res.status()).toBe(303);
        expect(res.headers().location).toBe(`${SERVICE}/f/${form.id}/thanks`);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
      // One post, held back until the token was in it.
      expect(posts).toHaveLength(1);
      expect(new URLSearchParams(posts[0]).get('_captchaToken')).toBe('good-token');
      expect(fake.calls.filter((c) => c.path === `/${provider}`).map((c) => c.fields.response)).toEqual(['good-token']);
      expect(await submissions(t, form.id)).toMatchObject([
        { answers: { email: `${provider}@example.com`, topic: 'Demo', consent: true } },
      ]);
    },
    60_000,
  );

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
      expect(await embedded.locator('input[name="_landingPage"]').getAttribute('value')).toBe(
        `${CUSTOMER}/landing?utm_source=partner&utm_medium=embed`,
      );
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
      {
        answers: { email: 'embed@example.com', topic: 'Pricing', consent: true },
        attribution: {
          utm: { source: 'partner', medium: 'embed' },
          landingPage: `${CUSTOMER}/landing?utm_source=partner&utm_medium=embed`,
        },
      },
    ]);
    const [visitor] = await t.sql<{ email: string }>(
      'select c.email from tracking_visitors v join contacts c on c.id = v.contact_id where v.organization_id = ? and v.visitor_id = ?',
      [a.orgId, 'vis_loader_browser_01'],
    );
    expect(visitor).toEqual({ email: 'embed@example.com' });
  }, 60_000);
});
