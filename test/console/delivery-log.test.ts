/**
 * The delivery log as good as Svix's (issue 29): an attempt opens to the request exactly as sent (URL, the Standard
 * Webhooks headers, the body pretty-printed and copied as the exact bytes) and to what came back (status, headers, the
 * start of the body), its duration, and the next attempt with why; the log filters by period and finds a delivery by
 * its event's or its contact's id. At 1280 and 390 px, axe clean at both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.ts';
import { internalClient } from '../support/internal.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { startEngine, waitForLog } from '../webhooks/delivery/support.ts';
import {
  type ConsoleHarness,
  copied,
  expectAccessible,
  expectNoSideScroll,
  FLOW_TIMEOUT,
  hasChromium,
  PASSWORD,
  type Person,
  startConsole,
} from './support.ts';

describe.skipIf(!hasChromium)('an attempt of the delivery log', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let rx: Receiver;
  let owner: Person;
  let endpointId: string;
  let contactId: string;
  let body: string;
  beforeAll(async () => {
    h = await startConsole({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', WEBHOOK_PUMP_INTERVAL_MS: '20' });
    await startEngine(h.t);
    // A receiver that is down: 503, a header of its own and a JSON answer.
    rx = await startReceiver({
      responder: (_req, res) => {
        res.writeHead(503, { 'content-type': 'application/json', 'x-receiver': 'maintenance' }).end('{"error":"down for maintenance"}');
      },
    });
    const org = await h.t.newOrg();
    const [user] = await h.t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
    owner = { email: user!.email, password: PASSWORD, role: 'owner', userId: org.userId, orgId: org.orgId };
    const made = await internalClient(h.t, org.internalKey).webhooks.create.mutate({
      url: `${rx.origin}/hook`,
      events: ['contact.created'],
      description: null,
    });
    endpointId = made.id;
    const res = await call(h.t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'ada@example.com', firstName: 'Ada' } });
    contactId = res.body.id;
    await waitForLog(h.t, endpointId, 1);
    // Its second attempt is due 30 s after the first: held off, so the log stays at one line however slow the host.
    await h.t.sql(`update webhook_deliveries set next_attempt_at = next_attempt_at + interval '1 day' where endpoint_id = ?`, [endpointId]);
    [{ body }] = (await h.t.sql<{ body: string }>('select body from webhook_deliveries where endpoint_id = ?', [endpointId])) as [
      { body: string },
    ];
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });

  it('shows what was sent and what came back, and why a next attempt follows', async () => {
    const { page } = await h.signedIn(owner, `/webhooks/${endpointId}`);
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    await page.getByRole('link', { name: /^Details of contact\.created, attempt 1/ }).click();
    await page.getByRole('heading', { name: 'Delivery attempt', level: 1 }).waitFor();
    expect(page.url()).toMatch(new RegExp(`/app/webhooks/${endpointId}/attempts/[0-9a-f-]{36}$`));

    const request = page.getByRole('region', { name: 'Request' });
    expect(await request.textContent()).toContain(`POST ${rx.origin}/hook`);
    const sent = rx.requests[0]!;
    const header = (name: string) => request.getByRole('row', { name: new RegExp(`^${name} `) }).locator('td');
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type'])
      expect(await header(name).textContent()).toBe(String(sent.headers[name]));
    // The body pretty-printed on screen; Copy puts the exact bytes sent (and signed) on the clipboard.
    expect(await request.getByLabel('Request body', { exact: true }).textContent()).toBe(JSON.stringify(JSON.parse(body), null, 2));
    expect(sent.rawBody.toString('utf8')).toBe(body);
    await request.getByRole('button', { name: 'Copy Request body' }).click();
    await request.getByRole('button', { name: 'Copied Request body' }).waitFor();
    expect(await copied(page)).toBe(body);

    const response = page.getByRole('region', { name: 'Response' });
    expect(await response.textContent()).toContain('Status 503');
    expect(
      await response
        .getByRole('row', { name: /^x-receiver / })
        .locator('td')
        .textContent(),
    ).toBe('maintenance');
    expect(await response.getByLabel('Response body', { exact: true }).textContent()).toBe('{"error":"down for maintenance"}');
    const summary = page.getByRole('region', { name: /contact\.created/ });
    expect(await summary.textContent()).toContain('Attempt 2 of 5, because this one failed (the receiver answered 503)');
    expect(await summary.textContent()).toMatch(/Duration\d+ ms/);
    await expectAccessible(page, 'delivery-attempt');
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSideScroll(page);
    await expectAccessible(page, 'delivery-attempt-390');
  });

  it('finds a delivery by its contact or event id and filters by period; a malformed id is refused beside the field', async () => {
    const { page } = await h.signedIn(owner, `/webhooks/${endpointId}`);
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    const rows = page.locator('table.delivery-log tbody tr');
    await rows.first().waitFor();
    const search = page.getByLabel('Event or contact id');

    await search.fill(crypto.randomUUID());
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('No attempt matches these filters').waitFor();

    await search.fill(contactId);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    const [event] = await h.t.sql<{ event_id: string }>('select event_id from webhook_deliveries where endpoint_id = ?', [endpointId]);
    await search.fill(event!.event_id);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);

    await search.fill('not-an-id');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.locator('.field-error', { hasText: 'search takes an id' }).waitFor();
    expect(await search.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Clear search' }).click();
    await rows.first().waitFor();

    await page.getByLabel('Period').selectOption({ label: 'The last hour' });
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSideScroll(page);
    await expectAccessible(page, 'webhook-390');
  });
});
