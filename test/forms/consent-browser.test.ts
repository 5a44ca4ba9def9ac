import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import type { TestApp } from '../support/app.ts';
import { hasChromium, type PublicOrigin, publicOrigin, sharedChromium } from '../support/chromium.ts';
import type { SmtpInbox } from '../mail/smtp-inbox.ts';
import { type MailApp, startMailApp } from '../mail/support.ts';

/** The service as the browser sees it (the mail's links point there), answered by the test server (publicOrigin). */
const SERVICE = 'http://consent.leadwire.test';
const NEWS = { purpose: 'email_marketing', text: 'Send me product news by email. I can unsubscribe at any time.', version: '2026-11' };

/**
 * Double opt-in in a browser (issue 30): a person ticks the consent box of a hosted form, the confirmation mail reaches
 * a real SMTP server, the browser follows its link, sees what it confirms, and confirms; then unsubscribes through
 * the mail's other link. The entries and events are read from PostgreSQL at each step.
 */
describe.skipIf(!hasChromium)('double opt-in in a browser', () => {
  let t: TestApp;
  let smtp: SmtpInbox;
  let mail: MailApp;
  let org: TestOrg;
  let browser: Browser;
  let context: BrowserContext;
  let service: PublicOrigin;

  beforeAll(async () => {
    mail = await startMailApp({ APP_URL: SERVICE, BASE_URL: `${SERVICE}/api` });
    ({ t, smtp } = mail);
    org = await newTestOrg(t);
    browser = await sharedChromium();
    service = await publicOrigin(SERVICE, t.origin);
    context = await browser.newContext({ proxy: service.proxy });
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await service?.close();
    await mail?.close();
  });

  const statuses = async (email: string) =>
    (
      await t.sql<{ status: string }>(
        `select e.status from consent_entries e join contacts c on c.id = e.contact_id where c.email = ? order by e.created_at`,
        [email],
      )
    ).map((r) => r.status);
  const events = async (email: string) =>
    (
      await t.sql<{ granted: boolean }>(
        `select (payload->'data'->'consent'->>'granted')::boolean as granted from outbox_events
         where event = 'contact.consent_changed' and payload->'data'->'contact'->>'email' = ? order by created_at, seq`,
        [email],
      )
    ).map((r) => r.granted);

  it('ticked on the hosted form, confirmed from the mailed link, withdrawn from the unsubscribe link', async () => {
    const form = await org.owner.forms.create.mutate({
      name: 'Newsletter',
      published: true,
      fields: [{ id: 'email', label: 'Email', type: 'email', required: true }],
      consent: { doubleOptIn: true, purposes: [NEWS] },
    });
    const email = `browser-${Date.now()}@example.com`;
    const page = await context.newPage();
    await page.goto(`${SERVICE}/f/${form.id}`);
    // The box carries the exact words that will be recorded, and is not ticked in advance.
    const box = page.getByLabel(NEWS.text);
    expect(await box.isChecked()).toBe(false);
    await page.getByLabel('Email (required)').fill(email);
    await box.check();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(`${SERVICE}/f/${form.id}/thanks`);
    expect(await statuses(email)).toEqual(['pending']);

    const mail = await smtp.next(email);
    expect(mail.link.startsWith(`${SERVICE}/consent/confirm?token=`)).toBe(true);
    await page.goto(mail.link);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Confirm your subscription');
    expect(await page.getByRole('listitem').textContent()).toBe(NEWS.text);
    // Opening the link (as a mail scanner would) confirmed nothing.
    expect(await statuses(email)).toEqual(['pending']);
    expect(await events(email)).toEqual([]);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${SERVICE}/consent/confirm/done`);
    expect(await page.getByRole('status').textContent()).toBe('Thank you: your subscription is confirmed.');
    expect(await statuses(email)).toEqual(['pending', 'granted']);
    expect(await events(email)).toEqual([true]);

    const unsubscribe = /Unsubscribe at any time: (\S+)/.exec(mail.text)![1]!;
    await page.goto(unsubscribe);
    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.waitForURL(`${SERVICE}/consent/withdraw/done`);
    expect(await statuses(email)).toEqual(['pending', 'granted', 'withdrawn']);
    expect(await events(email)).toEqual([true, false]);
    await page.close();
  });
});
