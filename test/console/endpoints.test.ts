/**
 * Adding an endpoint (issue 29): a page of its own, nothing ticked in advance, a refusal that puts the focus on the
 * control it names; "every event" stored as the wildcard and delivering every type of the catalogue, a type the
 * stored list lacks included once the server starts; the log's event filter offering the whole catalogue; a
 * confirmation readable at 390 px. Axe at both widths.
 */
import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { emitEvents } from '#core/events/outbox.ts';
import { refreshWildcards } from '#core/webhooks/endpoints/service.ts';
import { SUBSCRIBABLE_EVENTS } from '#core/webhooks/endpoints/schemas.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { startEngine, waitForLog } from '../webhooks/delivery/support.ts';
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

describe.skipIf(!hasChromium)('adding an endpoint', { timeout: FLOW_TIMEOUT }, () => {
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
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });

  it('on its own page, refuses "no events" with the focus on the picker, and stores "every event" as the wildcard', async () => {
    const { page } = await h.signedIn(owner, '/webhooks');
    await page.getByRole('link', { name: 'Add an endpoint' }).first().click();
    await page.getByRole('heading', { name: 'Add an endpoint', level: 1 }).waitFor();
    // Nothing chosen in advance.
    expect(await page.getByRole('checkbox', { checked: true }).count()).toBe(0);
    await page.getByLabel('URL', { exact: true }).fill(`${rx.origin}/all`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const message = page.locator('#events-error');
    await message.waitFor();
    // The focus lands on the picker's first control, the message right under its legend.
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent ?? ''))
      .toContain('Every event');
    expect(await page.locator('fieldset.event-picker').getAttribute('aria-describedby')).toBe('events-error');
    await expectAccessible(page, 'webhook-new-refused');
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSideScroll(page);
    await expectAccessible(page, 'webhook-new-390');
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole('checkbox', { name: /^Every event/ }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Webhook endpoint', level: 1 }).waitFor();
    await page.getByText('Every event (*): every type of the catalogue, including types added later.').waitFor();
    const [row] = await h.t.sql<{ id: string; events: string[] }>('select id, events from webhook_endpoints where url = ?', [
      `${rx.origin}/all`,
    ]);
    expect(row!.events[0]).toBe('*');
    expect((await (await h.api(owner)).webhooks.get.query({ id: row!.id })).events).toEqual(['*']);

    // A version older than this one stored fewer names; the next start brings the column to today's catalogue.
    await h.t.sql(`update webhook_endpoints set events = array_remove(events, 'nonprofit.activated') where id = ?`, [row!.id]);
    expect(await refreshWildcards(h.t.runtime.deps.db)).toBe(1);

    // Every type of the catalogue, once each, reaches it.
    const now = h.t.clock.now();
    await emitEvents(
      h.t.runtime.deps.db,
      SUBSCRIBABLE_EVENTS.map((event) => ({
        orgId: owner.orgId,
        event,
        source: 'app' as const,
        data: EVENT_CATALOGUE[event].example.data,
        at: now,
      })),
    );
    await waitForLog(h.t, row!.id, SUBSCRIBABLE_EVENTS.length);
    const received = rx.requests.filter((r) => r.url === '/all').map((r) => String(r.headers['x-webhook-event']));
    expect(received.toSorted()).toEqual([...SUBSCRIBABLE_EVENTS].sort());

    // Its log filters by any type of the catalogue.
    await page.reload();
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    await page.getByLabel('Event', { exact: true }).selectOption('nonprofit.activated');
    // The unfiltered log already has this row: wait for the filtered answer, the other rows gone.
    const rows = page.locator('table.delivery-log tbody tr');
    await expect.poll(() => rows.count(), { timeout: 60_000 }).toBe(1);
    expect(await rows.first().textContent()).toContain('nonprofit.activated');

    // A confirmation is a dialog of its own, readable on a phone; Escape steps back to the button that asked.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate secret' });
    await dialog.waitFor();
    const box = await dialog.boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await expectNoSideScroll(page);
    await expectAccessible(page, 'webhook-confirm-390');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Rotate secret');
    await expectAccessible(page, 'webhook-390');
  });
});
