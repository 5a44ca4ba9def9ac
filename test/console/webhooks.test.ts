/**
 * The Webhooks screens as an owner uses them (issue 20): an endpoint to a local HTTPS receiver created with the event
 * picker, a test sent from the endpoint screen and its attempt in the log, a broken receiver's failures with their
 * response excerpts, disable and enable, recovery after the fix, the secret revealed on demand; a member offered none
 * of it; the endpoint screen reached straight from a link through sign-in. Deliveries run on the test server's own
 * pg-boss workers; the test waits for them by watching the page (the log looks again by itself), never by sleeping.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesOf, startEngine, upsertContact, waitForLog } from '../webhooks/delivery/support.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type ConsoleHarness, expectAccessible, FLOW_TIMEOUT, hasChromium, PASSWORD, type Person, startConsole } from './support.ts';

/** Waits on a row bound only a hang: the test's own time-out says when something is wrong. */
const HANG = 120_000;

describe.skipIf(!hasChromium)('the Webhooks screens', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let rx: Receiver;
  let owner: Person;
  let publicKey: string;
  beforeAll(async () => {
    h = await startConsole({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true' });
    await startEngine(h.t);
    rx = await startReceiver();
    // A workspace with a Public key too, so a real contact.created can be delivered (and fail, and be recovered).
    const org = await h.t.newOrg();
    const [user] = await h.t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
    owner = { email: user!.email, password: PASSWORD, role: 'owner', userId: org.userId, orgId: org.orgId };
    publicKey = org.publicKey;
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });

  /** What the receiver got at `path` (each endpoint of this file has a path of its own). */
  const requestsTo = (path: string) => rx.requests.filter((r) => r.url === path);

  /** The delivery log's rows that hold every one of `texts`. */
  const logRow = (page: Page, ...texts: (string | RegExp)[]) =>
    texts.reduce((rows, text) => rows.filter({ hasText: text }), page.locator('table.delivery-log tbody tr'));

  it('refuses a bad URL beside its field, creates an endpoint with the event picker, hides its secret until asked, shows a test without a reload', async () => {
    const { page } = await h.signedIn(owner, '/webhooks');
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'No endpoints yet' }).waitFor();
    await expectAccessible(page, 'webhooks');
    // Adding an endpoint is a page of its own.
    await page.getByRole('link', { name: 'Add an endpoint' }).first().click();
    await page.getByRole('heading', { name: 'Add an endpoint', level: 1 }).waitFor();

    // A refused URL: the server's sentence beside the URL field, nothing created.
    await page.getByLabel('URL', { exact: true }).fill('http://127.0.0.1/hook');
    await page.getByRole('checkbox', { name: /^contact\.created/ }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const url = page.getByLabel('URL', { exact: true });
    await page.locator('.field-error', { hasText: 'https://' }).waitFor();
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('alert').textContent()).toContain('validation_failed');
    expect(await h.t.sql('select id from webhook_endpoints where organization_id = ?', [owner.orgId])).toEqual([]);
    await expectAccessible(page, 'webhooks-refused');

    // The example payload of an event opens from the picker.
    await page.getByText('Example payload of contact.created').click();
    expect(await page.getByLabel('Example payload of contact.created').textContent()).toContain('"event": "contact.created"');

    await url.fill(`${rx.origin}/hook`);
    await page.getByLabel('Description (optional)').fill('CRM sync');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Webhook endpoint', level: 1 }).waitFor();
    const [row] = await h.t.sql<{ id: string; url: string; events: string[]; secret: string }>(
      'select id, url, events, secret from webhook_endpoints where organization_id = ?',
      [owner.orgId],
    );
    expect(row).toMatchObject({ url: `${rx.origin}/hook`, events: ['contact.created'] });
    expect(page.url()).toBe(`${h.t.origin}/app/webhooks/${row!.id}`);

    // The secret: hidden until revealed.
    expect(await page.content()).not.toContain(row!.secret);
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    await page.getByText(row!.secret).waitFor();
    await page.getByRole('button', { name: 'Hide secret' }).click();
    expect(await page.content()).not.toContain(row!.secret);

    // A test ping: its 2xx attempt appears in the log without a reload (the log looks again by itself).
    await page.getByRole('button', { name: 'Send test event' }).click();
    await logRow(page, 'ping', 'succeeded', '200').waitFor();
    expect(requestsTo('/hook').map((r) => r.url)).toEqual(['/hook']);
    await expectAccessible(page, 'webhook-endpoint');
  });

  it('shows a broken receiver’s failures with their excerpts, filters the log, disables (the retry skipped), enables and recovers', async () => {
    // Set up through the API: an endpoint with one successful ping in its log.
    const api = await h.api(owner);
    const endpoint = await api.webhooks.create.mutate({ url: `${rx.origin}/broken`, events: ['contact.created'], description: null });
    await api.webhooks.test.mutate({ id: endpoint.id });
    await waitForLog(h.t, endpoint.id, 1, HANG);
    const { page } = await h.signedIn(owner, `/webhooks/${endpoint.id}`);
    await logRow(page, 'ping', 'succeeded', '200').waitFor();

    // Break the receiver: a failed ping and a failed contact.created, each with the receiver's answer and, for the
    // automatic one, its next attempt.
    rx.respond((_req, res) => void res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver is down: disk full'));
    await page.getByRole('button', { name: 'Send test event' }).click();
    await logRow(page, 'ping', 'failed', '500', 'receiver is down: disk full').waitFor();
    await upsertContact(h.t, publicKey);
    // The page was not told about the contact's event: once its attempt is logged, one Refresh shows it.
    await waitForLog(h.t, endpoint.id, 3, HANG);
    await page.getByRole('button', { name: 'Refresh' }).click();
    const failed = logRow(page, 'contact.created', 'failed', '500', 'receiver is down: disk full');
    await failed.waitFor();
    expect(await failed.locator('td').nth(7).locator('time').count()).toBe(1);

    // The filters narrow the log to what failed.
    await page.getByLabel('Outcome').selectOption('succeeded');
    await page.locator('table.delivery-log tbody tr', { hasText: 'failed' }).first().waitFor({ state: 'detached' });
    expect(await page.locator('table.delivery-log tbody tr').allTextContents()).toEqual([expect.stringContaining('succeeded')]);
    await page.getByLabel('Outcome').selectOption('');
    await failed.waitFor();

    // Disable: the retry that falls due is skipped, not sent.
    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    await page.getByRole('button', { name: 'Enable endpoint' }).waitFor();
    expect(await page.locator('.badge.off', { hasText: 'Disabled' }).count()).toBe(1);
    const [pending] = await h.t.sql<{ next_attempt_at: string | Date }>(
      `select next_attempt_at from webhook_deliveries where endpoint_id = ? and event = 'contact.created'`,
      [endpoint.id],
    );
    h.t.clock.set(new Date(pending!.next_attempt_at));
    await waitForLog(h.t, endpoint.id, 4, HANG);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await logRow(page, 'contact.created', 'skipped').waitFor();
    const sentWhileBroken = requestsTo('/broken').length;

    // Fix the receiver, enable, recover: the skipped delivery is replayed and succeeds.
    rx.respond((_req, res) => void res.writeHead(204).end());
    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    await page.getByRole('button', { name: 'Disable endpoint' }).waitFor();
    await page.getByRole('button', { name: 'Recover deliveries' }).click();
    await page.getByText('1 delivery queued again.').waitFor();
    await logRow(page, 'contact.created', 'succeeded', '204').waitFor();
    expect(requestsTo('/broken').length).toBe(sentWhileBroken + 1);
    expect(JSON.parse(requestsTo('/broken').at(-1)!.rawBody.toString('utf8'))).toMatchObject({ event: 'contact.created' });
  });

  it('redelivers a ping from its row: a new manual attempt with the same webhook-id', async () => {
    // Set up through the API: two test pings (two messages), both delivered.
    const api = await h.api(owner);
    const endpoint = await api.webhooks.create.mutate({ url: `${rx.origin}/again`, events: ['*'], description: null });
    await api.webhooks.test.mutate({ id: endpoint.id });
    await waitForLog(h.t, endpoint.id, 1, HANG);
    await api.webhooks.test.mutate({ id: endpoint.id });
    const [first] = await waitForLog(h.t, endpoint.id, 2, HANG);
    const { page } = await h.signedIn(owner, `/webhooks/${endpoint.id}`);
    const pings = logRow(page, 'ping', 'succeeded');
    await pings.nth(1).waitFor();
    // The older one is the lower row (newest first).
    await pings
      .nth(1)
      .getByRole('button', { name: /^Redeliver ping/ })
      .click();
    await page.getByText('ping is queued again').waitFor();
    await waitForLog(h.t, endpoint.id, 3, HANG);
    // The page watches for the redelivery it queued: it appears without a Refresh.
    await pings.nth(2).waitFor();
    const pingIds = requestsTo('/again').map((r) => r.headers['webhook-id']);
    // The first ping, the second one (another message), and the first one's redelivery.
    expect(pingIds).toEqual([pingIds[0], expect.not.stringMatching(String(pingIds[0])), pingIds[0]]);
    expect((await deliveriesOf(h.t, endpoint.id)).filter((d) => d.manual && d.replay_of === first!.delivery_id)).toHaveLength(1);
  });

  it('creates an endpoint on a private address disabled with the reason, refuses to enable it saying why, rotates its secret', async () => {
    const { page } = await h.signedIn(owner, '/webhooks/new');
    await page.getByLabel('URL', { exact: true }).fill('https://10.1.2.3/hook');
    await page.getByRole('checkbox', { name: 'Every event' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Webhook endpoint', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    const alert = page.locator('.problem', { hasText: 'webhook_url_refused' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('The endpoint stays disabled');
    await expectAccessible(page, 'webhook-endpoint-refused');

    // Rotating the secret shows the new one and until when the previous one still signs.
    const [before] = await h.t.sql<{ id: string; secret: string }>('select id, secret from webhook_endpoints where url = ?', [
      'https://10.1.2.3/hook',
    ]);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    // The question is a dialog of its own, readable at any width.
    await page.getByRole('dialog', { name: 'Rotate secret' }).waitFor();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByText('The previous secret still signs deliveries').waitFor();
    const [after] = await h.t.sql<{ secret: string; previous_secret_expires_at: string | Date }>(
      'select secret, previous_secret_expires_at from webhook_endpoints where id = ?',
      [before!.id],
    );
    expect(after!.secret).not.toBe(before!.secret);
    await page.getByText(after!.secret).waitFor();
    const until = await page.locator('.notice time').getAttribute('datetime');
    expect(until).toBe(new Date(after!.previous_secret_expires_at).toISOString());

    await page.getByRole('link', { name: 'All endpoints' }).click();
    const listed = page.locator('tbody tr', { hasText: 'https://10.1.2.3/hook' });
    await listed.waitFor();
    expect(await listed.locator('.badge.off').textContent()).toBe('Disabled');
    expect(await listed.locator('.reason').textContent()).not.toBe('');
    // Turning it on from the list is refused beside its row, saying why.
    await listed.getByRole('button', { name: 'Enable https://10.1.2.3/hook' }).click();
    await listed.locator('.problem', { hasText: 'webhook_url_refused' }).waitFor();
    await expectAccessible(page, 'webhooks-list');
  });

  it('turns an endpoint the engine disabled back on from the list, its failure count reset (spec: "in the list")', async () => {
    const endpoint = await (await h.api(owner)).webhooks.create.mutate({ url: `${rx.origin}/listed`, events: ['*'], description: null });
    // As the engine leaves it after 10 failures in a row.
    await h.t.sql(
      `update webhook_endpoints set enabled = false, failure_count = 10, disabled_reason = '10 failed attempts in a row' where id = ?`,
      [endpoint.id],
    );
    const { page } = await h.signedIn(owner, '/webhooks');
    const listed = page.locator('tbody tr', { hasText: `${rx.origin}/listed` });
    await listed.locator('.reason', { hasText: '10 failed attempts in a row' }).waitFor();
    await listed.getByRole('button', { name: `Enable ${rx.origin}/listed` }).click();
    await listed.locator('.badge.on', { hasText: 'Enabled' }).waitFor();
    expect(await listed.getByRole('button').count()).toBe(0);
    const [after] = await h.t.sql('select enabled, failure_count from webhook_endpoints where id = ?', [endpoint.id]);
    expect(after).toEqual({ enabled: true, failure_count: 0 });
  });

  it('opens an endpoint straight from a link through sign-in', async () => {
    const endpoint = await (await h.api(owner)).webhooks.create.mutate({ url: `${rx.origin}/linked`, events: ['*'], description: null });
    const context = await h.newContext();
    const page = await context.newPage();
    await page.goto(`/app/webhooks/${endpoint.id}`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Webhook endpoint', level: 1 }).waitFor();
    expect(page.url()).toBe(`${h.t.origin}/app/webhooks/${endpoint.id}`);
    await context.close();
  });

  it('offers a member no Webhooks entry, and says the screen is not for their role', async () => {
    const member = await h.colleague(owner, 'member');
    const { page } = await h.signedIn(member);
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    await page.goto('/app/webhooks');
    await page.getByRole('heading', { name: 'Not available to your role' }).waitFor();
    expect(await page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
  });
});
