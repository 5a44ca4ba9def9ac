/**
 * Website analytics (issue 29), Plausible-like, from page views the test sends through the snippet's endpoint; and
 * every screen of the console at 390 px (the navigation folded behind Menu, no sideways scrolling, lists as cards) and
 * at 1280 px, axe clean at both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newForm } from '../forms/support.ts';
import { call } from '../support/app.ts';
import { internalClient } from '../support/internal.ts';
import { collect, VISITOR_A, VISITOR_B } from '../tracking/support.ts';
import {
  cells,
  type ConsoleHarness,
  expectAccessible,
  expectNoSideScroll,
  FLOW_TIMEOUT,
  hasChromium,
  PASSWORD,
  type Person,
  startConsole,
} from './support.ts';

describe.skipIf(!hasChromium)('analytics and the phone layout', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let owner: Person;
  let endpointId: string;
  let formId: string;
  beforeAll(async () => {
    h = await startConsole();
    const org = await h.t.newOrg();
    const [user] = await h.t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
    owner = { email: user!.email, password: PASSWORD, role: 'owner', userId: org.userId, orgId: org.orgId };
    const api = internalClient(h.t, org.internalKey);
    endpointId = (await api.webhooks.create.mutate({ url: 'https://hooks.example.com/in', events: ['*'], description: 'CRM sync' })).id;
    formId = (await newForm(api, { name: 'Demo request' })).id;
    // Four views: visitor A twice on /pricing from a newsletter (then known by email), B once on /, one anonymous.
    expect(
      (await call(h.t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'ada@example.com', firstName: 'Ada' } })).status,
    ).toBe(200);
    const pricing = 'https://shop.example/pricing?utm_source=newsletter&utm_campaign=launch';
    const views = [
      { url: pricing, referrer: 'https://www.google.com/search?q=x', visitor: VISITOR_A },
      { url: pricing, referrer: 'https://www.google.com/', visitor: VISITOR_A, email: 'ada@example.com' },
      { url: 'https://shop.example/', referrer: null, visitor: VISITOR_B },
      { url: 'https://shop.example/', referrer: null },
    ];
    for (const v of views) expect((await collect(h.t, { org: org.orgId, ...v })).status).toBe(202);
  });
  afterAll(async () => h?.close());

  it('shows visitors, page views, top pages, referrers, UTM values and the visitors who became contacts; filters by page', async () => {
    const { page } = await h.signedIn(owner, '/analytics');
    await page.getByRole('heading', { name: 'Visitors and page views' }).waitFor();
    const totals = page.locator('dl.totals');
    expect(await totals.textContent()).toBe('Visitors2Page views4Anonymous views1Visitors who are contacts1');
    expect(await page.locator('figcaption').textContent()).toBe('Page views and visitors, the last 7 days, by UTC day. Times in UTC.');
    expect(await cells(page, 'Top pages', 'Only /pricing')).toEqual(['1', '2']);
    expect(await cells(page, 'Top pages', 'Only /')).toEqual(['1', '2']);
    expect(await cells(page, 'Referrers', 'www.google.com')).toEqual(['1', '2']);
    expect(await cells(page, 'UTM sources', 'newsletter')).toEqual(['1', '2']);
    expect(await cells(page, 'UTM campaigns', 'launch')).toEqual(['1', '2']);
    // Both of A's views are Ada's: knowing her attached the view before it.
    expect(await cells(page, 'Visitors who became contacts', 'Ada')).toEqual(['ada@example.com', '2', expect.any(String)]);
    await expectAccessible(page, 'analytics');

    await page.getByRole('button', { name: 'Only /pricing' }).click();
    await page.getByText('Only /pricing').waitFor();
    await totals.filter({ hasText: 'Page views2' }).waitFor();
    expect(await page.locator('figcaption').textContent()).toContain('Views of /pricing');
    await page.getByRole('button', { name: '24 hours' }).click();
    await page.locator('figcaption', { hasText: 'by UTC hour' }).waitFor();
    await totals.filter({ hasText: 'Page views2' }).waitFor();
  });

  it('fits every screen on a 390 px phone, the navigation folded behind Menu, axe clean', async () => {
    const { page } = await h.signedIn(owner, '/');
    await page.setViewportSize({ width: 390, height: 844 });
    const nav = page.getByRole('navigation', { name: 'Console' });
    // Folded: its links appear once Menu is pressed, and moving to a screen folds it again.
    expect(await nav.getByRole('link', { name: 'Members' }).isVisible()).toBe(false);
    await nav.getByRole('button', { name: 'Menu' }).click();
    expect(await nav.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('true');
    await nav.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    expect(await nav.getByRole('link', { name: 'Members' }).isVisible()).toBe(false);

    const screens: [string, string][] = [
      ['/', 'Overview'],
      ['/keys', 'API keys'],
      ['/webhooks', 'Webhooks'],
      ['/webhooks/new', 'Add an endpoint'],
      [`/webhooks/${endpointId}`, 'Webhook endpoint'],
      ['/forms', 'Forms'],
      [`/forms/${formId}`, 'Demo request'],
      ['/forms/new', 'New form'],
      ['/workflows', 'Workflows'],
      ['/analytics', 'Website analytics'],
      ['/website', 'Website'],
      ['/trash', 'Trash'],
      ['/members', 'Members'],
    ];
    for (const [path, title] of screens) {
      await page.goto(`/app${path === '/' ? '' : path}`);
      await page.getByRole('heading', { name: title, level: 1 }).waitFor();
      // Loaded: nothing says "Loading" any more.
      await page.locator('.loading').first().waitFor({ state: 'detached' });
      await expectNoSideScroll(page);
      const name =
        path === '/'
          ? 'home'
          : path
              .replace(/[0-9a-f-]{36}/, 'id')
              .slice(1)
              .replaceAll('/', '-');
      await expectAccessible(page, `phone-${name}`);
    }
  });
});
