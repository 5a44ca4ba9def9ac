import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { type SmtpInbox, startSmtpInbox } from '../../mail/smtp-inbox.ts';
import { deliveriesOf, endpointRow, expectSigned, insertEndpoint, startEngine, upsertContact, waitForLog } from './support.ts';

/** receiver.test resolves to loopback until a test points it at a private address (DNS turning hostile). */
let hostile = false;
const resolver = async (host: string) => (host === 'receiver.test' ? [hostile ? '10.0.0.7' : '127.0.0.1'] : ['127.0.0.1']);

let t: TestApp;
let rx: Receiver;
let smtp: SmtpInbox;

beforeAll(async () => {
  rx = await startReceiver();
  smtp = await startSmtpInbox();
  t = await initTestApp(
    {
      WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Leadwire <no-reply@leadwire.test>',
    },
    { resolver },
  );
  await startEngine(t, { mail: true });
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
  await smtp?.close();
});

async function orgWithAdmin() {
  const org = await t.newOrg();
  const [owner] = await t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
  const adminEmail = `admin-${org.orgId}@example.com`;
  const memberEmail = `member-${org.orgId}@example.com`;
  await t.sql(`insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', 'admin'), (?, ?, 'x', 'member')`, [
    org.orgId,
    adminEmail,
    org.orgId,
    memberEmail,
  ]);
  return { ...org, ownerEmail: owner!.email, adminEmail, memberEmail };
}

describe('endpoint health', () => {
  it('disables an endpoint at its 10th failure in a row, mails the owner and admins the reason, and delivers nothing more', async () => {
    const org = await orgWithAdmin();
    rx.respond((req, res) => void res.writeHead(req.url === '/down' ? 500 : 200).end('broken'));
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/down`, { failureCount: 8 });
    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 1);
    expect(await endpointRow(t, endpoint.id)).toMatchObject({ enabled: true, failure_count: 9 });

    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 2);
    const row = await endpointRow(t, endpoint.id);
    expect(row).toMatchObject({ enabled: false, failure_count: 10 });
    expect(row!.disabled_reason).toBe('10 deliveries failed in a row; the last one: HTTP 500');

    const [toOwner, toAdmin] = await Promise.all([smtp.next(org.ownerEmail), smtp.next(org.adminEmail)]);
    for (const mail of [toOwner, toAdmin]) {
      expect(mail.subject).toBe('A Leadwire webhook endpoint was disabled');
      expect(mail.template).toBe('webhook_disabled');
      expect(mail.text).toContain(`${rx.origin}/down`);
      expect(mail.text).toContain('Reason: 10 deliveries failed in a row; the last one: HTTP 500');
      // The link opens the endpoint's screen in the console (the API answers 401 in a browser); the calls stay for developers.
      expect(mail.text).toContain(`\n${t.runtime.deps.config.APP_URL}/app/webhooks/${endpoint.id}\n`);
      expect(mail.text).toContain(`POST ${t.runtime.deps.config.BASE_URL}/webhooks/${endpoint.id}/enable`);
      expect(mail.text).not.toContain(endpoint.secret);
    }
    expect(smtp.received.pending.filter((m) => m.envelope.to.includes(org.memberEmail))).toEqual([]);

    // Nothing more goes out: a retry that falls due is skipped, and so is a new event.
    const sent = rx.requests.filter((r) => r.url === '/down').length;
    const pending = (await deliveriesOf(t, endpoint.id)).filter((d) => d.state === 'pending');
    expect(pending).toHaveLength(2);
    t.clock.set(new Date(Math.max(...pending.map((d) => d.next_attempt_at!.getTime()))));
    await upsertContact(t, org.publicKey);
    const log = await waitForLog(t, endpoint.id, 5);
    expect(log.slice(2).map((l) => [l.outcome, l.attempt, l.error])).toEqual(Array(3).fill(['skipped', 0, 'endpoint disabled']));
    expect((await deliveriesOf(t, endpoint.id)).map((d) => [d.state, d.skip_reason])).toEqual(
      Array(3).fill(['skipped', 'endpoint disabled']),
    );
    expect(rx.requests.filter((r) => r.url === '/down')).toHaveLength(sent);
    expect((await endpointRow(t, endpoint.id))!.failure_count).toBe(10);
  });

  it('disables an endpoint at once when its host turns private at an attempt (blocked), and mails the reason', async () => {
    const org = await orgWithAdmin();
    rx.respond((_req, res) => void res.writeHead(200).end('ok'));
    const endpoint = await insertEndpoint(t, org.orgId, `https://receiver.test:${rx.port}/turning`);
    await upsertContact(t, org.publicKey);
    expect((await waitForLog(t, endpoint.id, 1))[0]).toMatchObject({ outcome: 'succeeded', status_code: 200 });

    hostile = true;
    try {
      await upsertContact(t, org.publicKey);
      const [, blocked] = await waitForLog(t, endpoint.id, 2);
      expect(blocked).toMatchObject({ outcome: 'blocked', status_code: null, next_attempt_at: null });
      expect(blocked!.error).toContain('10.0.0.7');
    } finally {
      hostile = false;
    }
    expect(rx.requests.filter((r) => r.url === '/turning')).toHaveLength(1);
    const row = await endpointRow(t, endpoint.id);
    expect(row!.enabled).toBe(false);
    expect(row!.disabled_reason).toContain('10.0.0.7');
    expect((await deliveriesOf(t, endpoint.id)).map((d) => d.state)).toEqual(['succeeded', 'failed']);
    const mail = await smtp.next(org.ownerEmail);
    expect(mail.text).toContain(`Reason: ${row!.disabled_reason}`);
  });

  it('unsubscribes a REST hook whose receiver answers 410 Gone', async () => {
    const org = await t.newOrg();
    rx.respond((req, res) => void res.writeHead(req.url === '/gone' ? 410 : 200).end());
    const hook = await insertEndpoint(t, org.orgId, `${rx.origin}/gone`, { kind: 'rest_hook', events: ['contact.created'] });
    const plain = await insertEndpoint(t, org.orgId, `${rx.origin}/gone`, { events: ['contact.created'] });
    await upsertContact(t, org.publicKey);
    // The plain endpoint's 410 is an ordinary failure (retried); the hook is gone with its deliveries.
    await waitForLog(t, plain.id, 1);
    await expect
      .poll(async () => (await t.sql('select id from webhook_endpoints where id = ?', [hook.id])).length, { timeout: 15_000, interval: 25 })
      .toBe(0);
    expect(await deliveriesOf(t, hook.id)).toEqual([]);
    expect((await deliveriesOf(t, plain.id))[0]).toMatchObject({ state: 'pending', attempts: 1 });
    expect(await endpointRow(t, plain.id)).toMatchObject({ enabled: true, failure_count: 1 });
  });

  it('sends manual replays and test pings (even to a disabled endpoint) without counting them toward disabling', async () => {
    const org = await orgWithAdmin();
    rx.respond((req, res) => void res.writeHead(req.url === '/flaky' ? 500 : 200).end('nope'));
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/flaky`, { failureCount: 9 });
    await t.sql('update webhook_endpoints set enabled = false, failure_count = 9 where id = ?', [endpoint.id]);

    const ping = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/test`, org.internalKey);
    expect(ping.status).toBe(202);
    expect(ping.body).toMatchObject({ event: 'ping', state: 'pending', skipReason: null });
    const [line] = await waitForLog(t, endpoint.id, 1);
    expect(line).toMatchObject({
      delivery_id: ping.body.deliveryId,
      attempt: 1,
      outcome: 'failed',
      status_code: 500,
      next_attempt_at: null,
    });
    const req = rx.requests.find((r) => r.headers['webhook-id'] === ping.body.deliveryId)!;
    expectSigned(req, endpoint.secret);
    const body = JSON.parse(req.rawBody.toString('utf8'));
    expect(body).toEqual({ id: expect.any(String), event: 'ping', timestamp: expect.any(String), data: { message: expect.any(String) } });
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'failed', attempts: 1, manual: true });

    await t.sql('update webhook_endpoints set enabled = true where id = ?', [endpoint.id]);
    const again = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/deliveries/${ping.body.deliveryId}/redeliver`, org.internalKey);
    expect(again.status).toBe(202);
    await waitForLog(t, endpoint.id, 2);
    const replay = (await deliveriesOf(t, endpoint.id)).find((d) => d.id === again.body.deliveryId)!;
    expect(replay).toMatchObject({ manual: true, replay_of: ping.body.deliveryId, state: 'failed', attempts: 1 });
    expect(await endpointRow(t, endpoint.id)).toMatchObject({ enabled: true, failure_count: 9 });
  });
});
