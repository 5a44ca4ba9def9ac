import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PublicOrigin, publicOrigin } from '../support/chromium.ts';
import { type ConsoleHarness, copied, expectAccessible, FLOW_TIMEOUT, hasChromium, type Person, startConsole } from './support.ts';

/**
 * The server's public address (APP_URL, BASE_URL) as websites and submitters reach it, unlike the loopback address the
 * console is opened at: the console must show this one. A visitor's browser reaches it there (publicOrigin).
 */
const SERVICE = 'http://leads.leadwire.test';

describe.skipIf(!hasChromium)('the Forms and Website screens', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let owner: Person;
  let service: PublicOrigin;
  beforeAll(async () => {
    h = await startConsole({ APP_URL: SERVICE, BASE_URL: `${SERVICE}/api` });
    owner = await h.owner();
    service = await publicOrigin(SERVICE, h.t.origin);
  });
  afterAll(async () => {
    await h?.close();
    await service?.close();
  });

  it('builds a form with two fields, refuses a bad save beside its fields, and shows a hosted-page submission with its attribution', async () => {
    const { page, context } = await h.signedIn(owner, '/forms');
    await page.getByRole('heading', { name: 'No forms yet' }).waitFor();
    await expectAccessible(page, 'forms');

    await page.getByRole('link', { name: 'New form' }).click();
    await page.getByRole('heading', { name: 'New form', level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Demo request');
    await page.getByRole('button', { name: 'Add a field' }).click();
    await page.getByRole('radio', { name: 'A page of my website (redirect)' }).check();
    await page.getByLabel('Redirect address').fill('javascript:alert(1)');
    await page.getByRole('button', { name: 'Create form' }).click();
    // The second field's empty label and the redirect, each refused beside its input, in the server's words.
    const second = page.getByRole('group', { name: 'Field 2' });
    const label = second.getByLabel('Label');
    await expect.poll(() => label.getAttribute('aria-invalid')).toBe('true');
    expect(await second.locator('.field-error').first().textContent()).toBe('label must not be empty');
    const redirect = page.getByLabel('Redirect address');
    expect(await redirect.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${(await redirect.getAttribute('aria-describedby'))!.split(' ').at(-1)}`).textContent()).toMatch(
      /redirectUrl/,
    );
    expect(await page.getByRole('alert').first().textContent()).toContain('validation_failed');
    expect(await h.t.sql(`select id from forms where organization_id = ?`, [owner.orgId])).toEqual([]);
    await expectAccessible(page, 'form-new-refused');

    // Fixed: the label gives the field its id; a message instead of the redirect.
    await label.fill('First name');
    expect(await second.getByLabel('Field id').inputValue()).toBe('firstName');
    await page.getByRole('radio', { name: 'My own message' }).check();
    await page.getByRole('textbox', { name: 'Thank-you message' }).fill('Thanks, we will call you.');
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('heading', { name: 'Demo request', level: 1 }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Form created' }).count()).toBe(1);
    const [stored] = await h.t.sql<{ id: string; fields: { id: string; label: string; required: boolean }[]; thank_you_message: string }>(
      `select id, fields, thank_you_message from forms where organization_id = ?`,
      [owner.orgId],
    );
    expect(stored!.fields.map((f) => [f.id, f.label, f.required])).toEqual([
      ['email', 'Email', true],
      ['firstName', 'First name', false],
    ]);
    expect(stored!.thank_you_message).toBe('Thanks, we will call you.');

    // Reordered with the keyboard alone: focus "Move First name up", press Enter, save.
    await page.getByRole('button', { name: 'Move up: First name' }).focus();
    await page.keyboard.press('Enter');
    expect(await page.getByRole('group', { name: 'Field 1: First name' }).count()).toBe(1);
    // Focus follows the field (to its other button, now that it is first), so the next key press acts on it again.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Move down: First name');
    await page.getByRole('button', { name: 'Save form' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const [reordered] = await h.t.sql<{ fields: { id: string }[] }>(`select fields from forms where id = ?`, [stored!.id]);
    expect(reordered!.fields.map((f) => f.id)).toEqual(['firstName', 'email']);
    expect(await page.getByText('No submissions yet').count()).toBe(1);
    await expectAccessible(page, 'form');

    // The hosted link and the embed snippet, copied with their buttons.
    const hosted = `${SERVICE}/f/${stored!.id}`;
    await page.getByRole('button', { name: 'Copy hosted link' }).click();
    await page.getByRole('button', { name: 'Copied hosted link' }).waitFor();
    expect(await copied(page)).toBe(hosted);
    await page.getByRole('button', { name: 'Copy embed snippet' }).click();
    expect(await copied(page)).toBe(
      `<div data-leadwire-form="${stored!.id}"></div><script src="${SERVICE}/api/embed/form-loader.js" async></script>`,
    );

    // A visitor on the hosted page (the link the console shows), arriving from a campaign.
    expect(await page.getByRole('link', { name: 'Open the hosted page' }).getAttribute('href')).toBe(hosted);
    const visitor = await (await h.newContext({ proxy: service.proxy })).newPage();
    await visitor.goto(`${hosted}?utm_source=newsletter&utm_campaign=autumn`);
    await visitor.getByLabel('First name').fill('Ada');
    await visitor.getByLabel('Email (required)').fill('ada@example.com');
    await visitor.getByRole('button', { name: 'Send' }).click();
    await visitor.getByText('Thanks, we will call you.').waitFor();
    await visitor.context().close();

    await page.getByRole('button', { name: 'Check again' }).click();
    const row = page.getByRole('row').filter({ hasText: 'ada@example.com' });
    await row.waitFor();
    const text = (await row.textContent())!;
    // Each answer under its field's label; the campaign and the page it arrived on (the hosted page, stored without its query).
    for (const pair of ['First nameAda', 'Emailada@example.com', 'utm_sourcenewsletter', 'utm_campaignautumn', `Landing page${hosted}`]) {
      expect(text).toContain(pair);
    }
    await context.close();
  });

  it('shows the website snippets with the workspace id, and lets an owner set the site domain but a member only read it', async () => {
    const { page, context } = await h.signedIn(owner, '/website');
    await page.getByRole('heading', { name: 'Tracking snippet' }).waitFor();
    const tracking = `<script async src="${SERVICE}/api/embed/tracking.js" data-org="${owner.orgId}"></script>`;
    expect(await page.getByLabel('tracking snippet', { exact: true }).textContent()).toBe(tracking);
    await page.getByRole('button', { name: 'Copy tracking snippet' }).click();
    expect(await copied(page)).toBe(tracking);
    await page.getByRole('button', { name: 'Copy lead-capture snippet' }).click();
    expect(await copied(page)).toContain(`/api/embed/lead-capture.js" data-org="${owner.orgId}"`);
    expect(await page.getByRole('link', { name: 'API keys' }).count()).toBeGreaterThan(0);
    await expectAccessible(page, 'website');

    const domain = page.getByRole('textbox', { name: 'Site domain' });
    await domain.fill('not a domain');
    await page.getByRole('button', { name: 'Save site domain' }).click();
    await expect.poll(() => domain.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error').textContent()).toMatch(/must be a public domain/);
    await expectAccessible(page, 'website-refused');

    await domain.fill('https://www.example.com/pricing');
    await page.getByRole('button', { name: 'Save site domain' }).click();
    await page.getByRole('status').filter({ hasText: 'Links to example.com in your texts are now tracked.' }).waitFor();
    expect(await domain.inputValue()).toBe('example.com');
    expect(await h.t.sql(`select site_domain from organizations where id = ?`, [owner.orgId])).toEqual([{ site_domain: 'example.com' }]);
    await context.close();

    const member = await h.colleague(owner, 'member');
    const seen = await h.signedIn(member, '/website');
    await seen.page.getByRole('heading', { name: 'Site domain for tracked links' }).waitFor();
    expect(await seen.page.getByText('Links to example.com are tracked.').count()).toBe(1);
    expect(await seen.page.getByRole('button', { name: 'Save site domain' }).count()).toBe(0);
    expect(await seen.page.getByRole('textbox').count()).toBe(0);
    // Every member builds forms (the server lets them): the member is offered to.
    await seen.page.getByRole('link', { name: 'Forms', exact: true }).click();
    await seen.page.getByRole('link', { name: 'Demo request' }).waitFor();
    expect(await seen.page.getByRole('link', { name: 'New form' }).count()).toBe(1);
    await seen.context.close();
  });
});
