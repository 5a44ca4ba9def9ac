/**
 * Issue 30 in the console: the website's goals (custom events by name, anonymous ones included) on the analytics page,
 * and a contact's screen with its consent history, reached from the analytics page's identified visitors. Consent is
 * seeded as a person gives it (a form with consent checkboxes submitted to the public endpoint), custom events as the
 * snippet sends them (POST /api/track/event); axe at 1280 and 390 px.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitJson } from '../forms/support.ts';
import { answerOf, type TestApp } from '../support/app.ts';
import { collect, VISITOR_A } from '../tracking/support.ts';
import {
  cells,
  type ConsoleHarness,
  expectAccessible,
  expectNoSideScroll,
  FLOW_TIMEOUT,
  hasChromium,
  type Person,
  startConsole,
} from './support.ts';

const NEWS = { purpose: 'email_marketing', text: 'Send me product news by email.', version: '2026-11', required: false };
const PARTNERS = { purpose: 'partner_offers', text: 'Share my details with partners.', version: 'v3', required: false };
const GRACE = 'grace@example.com';
const NEWS_PAGE = 'https://shop.example/news';

/** POST /api/track/event as the snippet's sendBeacon sends it. */
async function track(t: TestApp, body: Record<string, unknown>) {
  const res = await fetch(`${t.origin}/api/track/event`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example' },
    body: JSON.stringify(body),
  });
  expect((await answerOf(res)).status).toBe(202);
}

describe.skipIf(!hasChromium)('goals and a contact’s consent in the console', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let owner: Person;
  let member: Person;
  let contactId: string;
  let formId: string;
  beforeAll(async () => {
    h = await startConsole();
    owner = await h.owner();
    member = await h.colleague(owner, 'member');
    const api = await h.api(owner);
    formId = (
      await api.forms.create.mutate({
        name: 'Newsletter',
        published: true,
        fields: [
          { id: 'email', label: 'Email', type: 'email', required: true },
          { id: 'first_name', label: 'First name', type: 'text', required: false },
        ],
        consent: { doubleOptIn: false, purposes: [NEWS, PARTNERS] },
      })
    ).id;
    // Grace ticks the news box and leaves the partners' one: a grant and a refusal, with the page she was on.
    const submitted = await submitJson(h.t, formId, {
      email: GRACE,
      first_name: 'Grace',
      _consent_email_marketing: true,
      _landingPage: NEWS_PAGE,
    });
    expect(submitted.status).toBe(200);
    const [row] = await h.t.sql<{ id: string }>('select id from contacts where organization_id = ? and email = ?', [owner.orgId, GRACE]);
    contactId = row!.id;
    // Her browser is known by email from a page view; then three sign-ups (one hers, two anonymous) and a video.
    expect((await collect(h.t, { org: owner.orgId, url: 'https://shop.example/pricing', visitor: VISITOR_A, email: GRACE })).status).toBe(
      202,
    );
    const event = { org: owner.orgId, url: 'https://shop.example/pricing' };
    await track(h.t, { ...event, visitor: VISITOR_A, name: 'signup', props: { plan: 'pro' } });
    await track(h.t, { ...event, name: 'signup', props: { plan: 'pro' } });
    await track(h.t, { ...event, name: 'signup' });
    await track(h.t, { ...event, name: 'video_played' });
    // Goals count up to now, excluded: a second later every event is inside the period.
    h.t.clock.advance(1_000);
  });
  afterAll(async () => h?.close());

  it('shows the goals of the period and opens a known visitor’s consent history, axe clean at 1280 and 390 px', async () => {
    const { page } = await h.signedIn(owner, '/analytics');
    await page.getByRole('table', { name: 'Goals (custom events)' }).waitFor();
    expect(await cells(page, 'Goals (custom events)', 'signup')).toEqual(['3', '1', '2']);
    expect(await cells(page, 'Goals (custom events)', 'video_played')).toEqual(['1', '0', '1']);
    // Most frequent first.
    expect(await page.getByRole('table', { name: 'Goals (custom events)' }).getByRole('rowheader').allTextContents()).toEqual([
      'signup',
      'video_played',
    ]);
    await page.getByRole('button', { name: '24 hours' }).click();
    await page.getByText("The whole site's custom events in the last 24 hours").waitFor();
    expect(await cells(page, 'Goals (custom events)', 'signup')).toEqual(['3', '1', '2']);
    await expectAccessible(page, 'analytics-goals');

    await page.getByRole('table', { name: 'Visitors who became contacts' }).getByRole('link', { name: 'Grace' }).click();
    await page.getByRole('heading', { name: 'Grace', level: 2 }).waitFor();
    expect(page.url()).toBe(`${h.t.origin}/app/contacts/${contactId}`);
    await expectConsent(page);
    await expectAccessible(page, 'contact');

    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSideScroll(page);
    await expectAccessible(page, 'phone-contact');
    await page.goto('/app/analytics');
    await page.getByRole('table', { name: 'Goals (custom events)' }).waitFor();
    await expectNoSideScroll(page);
    await expectAccessible(page, 'phone-analytics-goals');
  });

  /** What Grace's form left: the purpose granted now, and both answers with their text, version, method, form and page. */
  async function expectConsent(page: Page) {
    await page.getByRole('table', { name: 'Consent history' }).waitFor();
    expect(await cells(page, 'Consent now, by purpose', 'email_marketing')).toEqual([
      'Granted',
      expect.stringMatching(/ UTC$/),
      'Single opt-in',
    ]);
    const rows = await page
      .getByRole('table', { name: 'Consent history' })
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ['email_marketing', 'Granted', NEWS.text, NEWS.version, 'Single opt-in', 'Newsletter', NEWS_PAGE],
      ['partner_offers', 'Declined', PARTNERS.text, PARTNERS.version, 'Single opt-in', 'Newsletter', NEWS_PAGE],
    ]);
    // Times are the server's, in UTC, said beside each one.
    const [entry] = await h.t.sql<{ created_at: Date }>('select created_at from consent_entries where contact_id = ? limit 1', [contactId]);
    const times = page.getByRole('table', { name: 'Consent history' }).locator('th time');
    expect(await times.first().getAttribute('datetime')).toBe(new Date(entry!.created_at).toISOString());
    expect(await times.first().textContent()).toMatch(/ UTC$/);
    expect(
      await page.getByRole('table', { name: 'Consent history' }).getByRole('link', { name: 'Newsletter' }).first().getAttribute('href'),
    ).toBe(`/app/forms/${formId}`);
    expect(await page.locator('dl.facts').textContent()).toContain(`Email${GRACE}`);
  }

  it('shows a member the same consent history (every role that reads contacts)', async () => {
    const { page } = await h.signedIn(member, `/contacts/${contactId}`);
    await page.getByRole('heading', { name: 'Grace', level: 2 }).waitFor();
    await expectConsent(page);
  });

  it('says how to send goals when there are none: the stub and a track call, axe clean', async () => {
    const newcomer = await h.owner();
    const { page } = await h.signedIn(newcomer, '/analytics');
    await page.getByText('No custom events in the last 7 days.').waitFor();
    const stub = '<script>window.leadwire=window.leadwire||{q:[],track:function(){this.q.push(arguments)}}</script>';
    expect(await page.getByLabel('The stub', { exact: true }).textContent()).toBe(stub);
    // The one the owners' docs print, so the two cannot drift apart.
    expect(readFileSync(new URL('../../docs/website.md', import.meta.url), 'utf8')).toContain(stub);
    expect(await page.getByLabel('A goal', { exact: true }).textContent()).toBe("leadwire.track('signup', { plan: 'pro' })");
    await expectAccessible(page, 'analytics-goals-empty');
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSideScroll(page);
    await expectAccessible(page, 'phone-analytics-goals-empty');
  });

  it('edits a form’s consent checkboxes: a bad purpose refused beside its input, then saved, then removed', async () => {
    const api = await h.api(owner);
    const form = await api.forms.create.mutate({
      name: 'Sign-up',
      published: true,
      fields: [{ id: 'email', label: 'Email', type: 'email', required: true }],
      consent: { doubleOptIn: false, purposes: [NEWS] },
    });
    const { page } = await h.signedIn(owner, `/forms/${form.id}`);
    const first = page.getByRole('group', { name: 'Consent checkbox 1' });
    expect(await first.getByLabel('Purpose', { exact: true }).inputValue()).toBe(NEWS.purpose);
    expect(await first.getByLabel('Text shown').inputValue()).toBe(NEWS.text);
    expect(await first.getByLabel('Version').inputValue()).toBe(NEWS.version);

    await page.getByRole('button', { name: 'Add a consent checkbox' }).click();
    const second = page.getByRole('group', { name: 'Consent checkbox 2' });
    await second.getByLabel('Purpose', { exact: true }).fill('SMS!');
    await second.getByLabel('Text shown').fill('Text me offers.');
    await second.getByLabel('Required').check();
    await page.getByLabel('Double opt-in').check();
    await page.getByRole('button', { name: 'Save form' }).click();
    const purpose = second.getByLabel('Purpose', { exact: true });
    await expect.poll(() => purpose.getAttribute('aria-invalid')).toBe('true');
    expect(await second.locator('.field-error').textContent()).toMatch(/^purpose must be 1-40 lowercase letters/);
    expect((await api.forms.get.query({ id: form.id })).consent?.purposes).toHaveLength(1);
    await expectAccessible(page, 'form-consent-refused');

    await purpose.fill('sms');
    await page.getByRole('button', { name: 'Save form' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api.forms.get.query({ id: form.id })).consent).toEqual({
      doubleOptIn: true,
      purposes: [
        { ...NEWS, field: '_consent_email_marketing' },
        { purpose: 'sms', text: 'Text me offers.', version: '1', required: true, field: '_consent_sms' },
      ],
    });
    // Saved as the server keeps it: the editor shows the stored boxes again.
    await page.getByRole('group', { name: 'Consent checkbox 2' }).waitFor();
    expect(await page.getByLabel('Double opt-in').isChecked()).toBe(true);

    for (const n of [2, 1]) await page.getByRole('button', { name: `Remove consent checkbox ${n}` }).click();
    expect(await page.getByLabel('Double opt-in').count()).toBe(0);
    await page.getByRole('button', { name: 'Save form' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await expect.poll(async () => (await api.forms.get.query({ id: form.id })).consent).toBeNull();
  });

  it('answers a contact that is not there with the server’s refusal', async () => {
    const { page } = await h.signedIn(owner, '/contacts/00000000-0000-4000-8000-000000000000');
    await page.getByRole('alert').filter({ hasText: 'Could not load the contact' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('(not_found)');
  });
});
