import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleHarness, expectAccessible, FLOW_TIMEOUT, hasChromium, type Person, startConsole } from './support.ts';

describe.skipIf(!hasChromium)('the console shell', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let owner: Person;
  beforeAll(async () => {
    h = await startConsole();
    owner = await h.owner();
  });
  afterAll(() => h?.close());

  it('serves one page for every path under /app with a strict CSP, no framing, and content-addressed assets', async () => {
    for (const path of ['/app', '/app/', '/app/webhooks/123', '/app/anything/at/all']) {
      const res = await fetch(`${h.t.origin}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const html = await res.text();
      const script = /src="(\/app\/assets\/console\.[\w-]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const asset = await fetch(`${h.t.origin}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    }
    const missing = await fetch(`${h.t.origin}/app/assets/console.0000.js`);
    expect(missing.status).toBe(404);
  });

  it('refuses a wrong password with the server’s sentence beside the form, then signs in, and the page passes axe', async () => {
    const context = await h.newContext();
    const page = await context.newPage();
    const refusedInline: string[] = [];
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) refusedInline.push(m.text());
    });
    await page.goto('/app');
    await page.getByRole('heading', { name: 'Sign in to Leadwire' }).waitFor();
    await expectAccessible(page, 'sign-in');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('invalid_credentials');
    await expectAccessible(page, 'sign-in-refused');

    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.getByText(owner.email).count()).toBeGreaterThan(0);
    await expectAccessible(page, 'overview');
    // The session is an HttpOnly cookie: nothing a script can read holds the token.
    const readable = await page.evaluate(
      () => document.cookie + JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    );
    expect(readable).not.toContain('lws_');
    expect(refusedInline).toEqual([]);
    // Nothing the console needs comes from anywhere but the server.
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => !url.startsWith(`${h.t.origin}/`))).toEqual([]);

    // A reload keeps the session; signing out ends it, and a reload then shows the sign-in screen.
    await page.reload();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Leadwire' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Leadwire' }).waitFor();
    await context.close();
  });

  it('moves through the screens with the keyboard alone: skip link, navigation, focus on each new heading', async () => {
    const { page, context } = await h.signedIn(owner);
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.goto('/app/no-such-screen');
    await page.getByRole('heading', { name: 'No such screen' }).waitFor();
    await page.getByRole('link', { name: 'Go to the overview' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    await context.close();
  });

  it('offers each role the screens it may open, in the issue’s order', async () => {
    const all = ['Overview', 'API keys', 'Webhooks', 'Forms', 'Workflows', 'Analytics', 'Website', 'Trash', 'Members'];
    const expected = { owner: all, admin: all, member: all.filter((n) => n !== 'Webhooks') };
    for (const role of ['owner', 'admin', 'member'] as const) {
      const who = role === 'owner' ? owner : await h.colleague(owner, role);
      const { page, context } = await h.signedIn(who);
      const nav = await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents();
      expect(nav, role).toEqual(expected[role]);
      await context.close();
    }
  });
});
