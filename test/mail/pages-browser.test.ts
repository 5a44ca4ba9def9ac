import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, uniqueEmail } from '../internal/accounts-support.ts';
import type { TestApp } from '../support/app.ts';
import { hasChromium, sharedChromium } from '../support/chromium.ts';
import type { SmtpInbox } from './smtp-inbox.ts';
import { type MailApp, startMailApp } from './support.ts';

// The run's Chromium (test/support/chromium.ts); without it this check cannot run, the HTTP tests of the pages still do.
describe.skipIf(!hasChromium)('the invitation page in a browser with JavaScript off', () => {
  let t: TestApp;
  let smtp: SmtpInbox;
  let browser: Browser;
  let mail: MailApp;

  beforeAll(async () => {
    mail = await startMailApp();
    ({ t, smtp } = mail);
    browser = await sharedChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await mail?.close();
  });

  it('shows an error next to its field, then accepts; the new member signs in through the API', async () => {
    const owner = await client(t).accounts.signUp.mutate({
      organizationName: 'Browser Org',
      email: uniqueEmail('owner'),
      password: 'correct horse battery staple',
    });
    const email = uniqueEmail('invitee');
    await client(t, owner.token).accounts.invite.mutate({ email, role: 'member' });
    const link = new URL((await smtp.next(email)).link);

    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    // The form's 400 is logged too ("Failed to load resource"); policy violations are what must not appear.
    const violations: string[] = [];
    page.on('console', (m) => void (/Content Security Policy|Refused to/i.test(m.text()) && violations.push(m.text())));
    try {
      await page.goto(`${t.origin}${link.pathname}${link.search}`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Join your team on Leadwire');

      // The browser's own checks (minlength) are not JavaScript; a mismatch only the server sees is the error path.
      await page.getByLabel('Your name (optional)').fill('Grace Hopper');
      await page.getByLabel('Password', { exact: true }).fill('the chosen password');
      await page.getByLabel('Repeat the password').fill('a different password');
      await page.getByRole('button', { name: 'Accept the invitation' }).click();
      await page.waitForLoadState();
      expect(await page.getByRole('alert').textContent()).toContain('The two passwords are not the same');
      const repeat = page.getByLabel('Repeat the password');
      expect(await repeat.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#confirmPassword-error').textContent()).toBe('The two passwords are not the same');
      expect(await page.getByLabel('Your name (optional)').inputValue()).toBe('Grace Hopper');

      await page.getByLabel('Password', { exact: true }).fill('the chosen password');
      await repeat.fill('the chosen password');
      await page.getByRole('button', { name: 'Accept the invitation' }).click();
      await page.waitForURL(`${t.origin}/accept-invite/done`);
      expect(await page.getByRole('status').textContent()).toBe('You have joined the organization.');
      // The stylesheet applied: the CSP hash matches, so no violation was reported either.
      expect(await page.locator('main').evaluate((el) => getComputedStyle(el).maxWidth)).toBe('416px');
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }

    const session = await client(t).accounts.signIn.mutate({ email, password: 'the chosen password' });
    expect(session.user).toMatchObject({ email, name: 'Grace Hopper', role: 'member', orgId: owner.user.orgId });
  }, 60_000);
});
