/**
 * The delivery filter on the endpoint screen (issue 30): a refused filter's sentence beside the field, a filter tried
 * against the workspace's recent events before it is saved, saved, applied by the engine, and its filtered events in the
 * delivery log only when the log is asked for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { insertEndpoint, startEngine, waitForLog } from '../webhooks/delivery/support.ts';
import { type ConsoleHarness, expectAccessible, FLOW_TIMEOUT, hasChromium, PASSWORD, type Person, startConsole } from './support.ts';

describe.skipIf(!hasChromium)('the delivery filter on the endpoint screen', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let rx: Receiver;
  let owner: Person;
  let publicKey: string;
  beforeAll(async () => {
    h = await startConsole({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', WEBHOOK_PUMP_INTERVAL_MS: '20' });
    await startEngine(h.t);
    rx = await startReceiver();
    rx.respond((_req, res) => void res.writeHead(200).end('ok'));
    const org = await h.t.newOrg();
    const [user] = await h.t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
    owner = { email: user!.email, password: PASSWORD, role: 'owner', userId: org.userId, orgId: org.orgId };
    publicKey = org.publicKey;
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });

  const upsert = async (email: string, tags: string[]) =>
    expect((await call(h.t, 'POST', '/contacts/upsert', { key: publicKey, body: { email, tags } })).status).toBe(200);

  it('refuses a bad filter beside its field, previews one against recent events, saves it, and logs what it kept back', async () => {
    await upsert('plain@example.com', []);
    await upsert('vip@example.com', ['vip']);
    const endpoint = await insertEndpoint(h.t, owner.orgId, `${rx.origin}/filtered`, { events: ['contact.created'] });
    const { page } = await h.signedIn(owner, `/webhooks/${endpoint.id}`);
    const box = page.getByLabel('Filter (JSON)');
    await box.waitFor();

    await box.fill('{"contact.leadScore": {"$gt": "high"}}');
    await page.getByRole('button', { name: 'Save filter' }).click();
    await page.locator('.field-error', { hasText: '"contact.leadScore".$gt needs a number' }).waitFor();
    expect(await box.getAttribute('aria-invalid')).toBe('true');
    const [unchanged] = await h.t.sql<{ filter: unknown }>('select filter from webhook_endpoints where id = ?', [endpoint.id]);
    expect(unchanged!.filter).toBeNull();

    await box.fill('{"contact.tags": "vip"}');
    await page.getByRole('button', { name: 'Test against recent events' }).click();
    await page.getByText('1 of 2 recent events would be sent.').waitFor();
    const rows = page.locator('table tbody tr', { hasText: 'contact.created' });
    expect(await rows.filter({ hasText: 'vip@example.com' }).getByText('Sent').count()).toBe(1);
    expect(await rows.filter({ hasText: 'plain@example.com' }).getByText('Filtered').count()).toBe(1);
    await expectAccessible(page, 'webhook-filter-preview');

    await page.getByRole('button', { name: 'Save filter' }).click();
    await page.getByText('Filter saved: it applies to the events that follow.').waitFor();
    const [saved] = await h.t.sql<{ filter: unknown }>('select filter from webhook_endpoints where id = ?', [endpoint.id]);
    expect(saved!.filter).toEqual({ 'contact.tags': 'vip' });

    await upsert('plain2@example.com', []);
    await upsert('vip2@example.com', ['vip']);
    await waitForLog(h.t, endpoint.id, 2);
    expect(rx.requests.filter((r) => r.url === '/filtered').map((r) => JSON.parse(r.rawBody.toString('utf8')).data.contact.email)).toEqual([
      'vip2@example.com',
    ]);
    await page.reload();
    const log = page.locator('table.delivery-log tbody tr');
    await log.filter({ hasText: 'Succeeded' }).first().waitFor();
    expect(await log.filter({ hasText: /filtered/i }).count()).toBe(0);
    await page.getByLabel('Outcome').selectOption('filtered');
    await log.filter({ hasText: "filtered out by the endpoint's filter" }).first().waitFor();
    expect(await log.count()).toBe(1);
  });
});
