/**
 * The overview (issue 29) as an owner sees it: charts of the requests, deliveries, submissions and page views the test
 * made through the API, each with its numbers in words and a table, its period and time zone and a link to its screen;
 * the limits in use; an endpoint failing now at the top; at 1280 and at 390 px wide, axe clean at both.
 */
import { runActivityRollup } from '#core/activity/rollup-job.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newForm, submitJson } from '../forms/support.ts';
import { call } from '../support/app.ts';
import { internalClient } from '../support/internal.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { collect, VISITOR_A, VISITOR_B } from '../tracking/support.ts';
import { insertEndpoint, startEngine, waitForLog } from '../webhooks/delivery/support.ts';
import {
  type ConsoleHarness,
  expectAccessible,
  expectNoSideScroll,
  FLOW_TIMEOUT,
  hasChromium,
  PASSWORD,
  type Person,
  startConsole,
} from './support.ts';

describe.skipIf(!hasChromium)('the overview', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let rx: Receiver;
  let owner: Person;
  beforeAll(async () => {
    h = await startConsole({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', WEBHOOK_PUMP_INTERVAL_MS: '20' });
    await startEngine(h.t);
    rx = await startReceiver();
    const org = await h.t.newOrg();
    const [user] = await h.t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
    owner = { email: user!.email, password: PASSWORD, role: 'owner', userId: org.userId, orgId: org.orgId };

    // What the charts must show, made through the API: 4 requests (3 succeeded, 1 refused), 2 form submissions, 5
    // deliveries (a contact.created for each contact the upserts and the submissions made), 3 page views by 2
    // visitors; and an endpoint 4 failures from the end of its patience.
    const api = internalClient(h.t, org.internalKey);
    const endpoint = await api.webhooks.create.mutate({ url: `${rx.origin}/hook`, events: ['contact.created'], description: null });
    await insertEndpoint(h.t, org.orgId, 'https://down.example/hook', { failureCount: 4, events: ['deal.won'] });
    for (const email of ['ada@example.com', 'grace@example.com', 'alan@example.com'])
      expect((await call(h.t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email } })).status).toBe(200);
    expect((await call(h.t, 'GET', '/contacts/search?email=nobody@example.com', { key: org.publicKey })).status).toBe(404);
    const form = await newForm(api, { name: 'Demo request' });
    for (const email of ['x@example.com', 'y@example.com'])
      expect((await submitJson(h.t, form.id, { email, topic: 'Demo', consent: true })).status).toBeLessThan(400);
    for (const visitor of [VISITOR_A, VISITOR_A, VISITOR_B])
      expect((await collect(h.t, { org: org.orgId, url: 'https://shop.example/pricing', visitor })).status).toBe(202);
    await waitForLog(h.t, endpoint.id, 5);
    // The minute's rollup, run now rather than waited for.
    await runActivityRollup(h.t.runtime.deps.db, h.t.clock.now());
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });

  const card = (page: Page, title: string) => page.locator('section.chart-card', { has: page.getByRole('heading', { name: title }) });

  it('charts what the workspace did, in numbers too, with the failing endpoint first; at 1280 and 390 px', async () => {
    // A zone half an hour off UTC: a reset time shown in the browser's zone would end in :30, not at the UTC hour.
    const { page } = await h.signedIn(owner, '/', { timezoneId: 'Asia/Kolkata' });
    await page.getByRole('heading', { name: 'API requests' }).waitFor();
    expect(await page.locator('.chart canvas').count()).toBeGreaterThanOrEqual(4);

    const api = card(page, 'API requests');
    expect(await api.locator('figcaption').textContent()).toBe('API requests, the last 24 hours, by UTC hour. Times in UTC.');
    expect(await api.locator('.chart-summary').first().textContent()).toBe('4 requests: 3 succeeded (2xx), 1 refused (4xx).');
    const keyRow = api.getByRole('row', { name: /Bootstrap public key/ });
    expect(await keyRow.locator('td').allTextContents()).toEqual(['3', '1']);
    expect(await card(page, 'Webhook deliveries').locator('.chart-summary').textContent()).toBe('5 deliveries: 5 succeeded.');
    expect(await card(page, 'Form submissions').locator('.chart-summary').textContent()).toBe('2 submissions: 2 demo request.');
    expect(await card(page, 'Page views and visitors').locator('.chart-summary').first().textContent()).toBe('3 page views: 3 page views.');
    expect(await card(page, 'Page views and visitors').locator('.chart-summary').nth(1).textContent()).toContain('2 visitors at most');

    const failing = page.getByRole('region', { name: 'Endpoints failing now' });
    expect(await failing.textContent()).toContain('4 failures in a row; disabled after 6 more.');
    // Failing endpoints come first, above the limits and the charts.
    expect(await page.locator('section.card').first().getAttribute('aria-labelledby')).toBe('failing-heading');
    const limits = page.getByRole('region', { name: 'Limits in use' });
    expect(await limits.textContent()).toContain('Webhook deliveries this hour5 of 1,000');
    expect(await limits.textContent()).toContain('Contacts (starter plan)5 of 10,000');
    // The hourly cap resets at the top of a UTC hour, said in UTC like the charts beside it.
    expect(await limits.locator('time').textContent()).toMatch(/:00\s?(AM|PM)? UTC$/);
    await expectAccessible(page, 'overview');

    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSideScroll(page);
    await expectAccessible(page, 'overview-390');
    await page.setViewportSize({ width: 1280, height: 800 });

    // A longer period: daily buckets, the same totals.
    await page.getByRole('button', { name: '7 days' }).click();
    await api.locator('figcaption', { hasText: 'by UTC day' }).waitFor();
    expect(await page.getByRole('button', { name: '7 days' }).getAttribute('aria-pressed')).toBe('true');
    expect(await api.locator('.chart-summary').first().textContent()).toBe('4 requests: 3 succeeded (2xx), 1 refused (4xx).');

    // Each chart leads to its screen.
    await card(page, 'Webhook deliveries').getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  });
});
