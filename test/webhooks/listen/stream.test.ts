import { createHmac, randomUUID } from 'node:crypto';
import { generateToken, hashKey } from '@leadwire/core';
import { runCleanup } from '#core/jobs/cleanup.ts';
import { listenHubOf } from '#core/webhooks/listen/hub.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { insertEndpoint, startDeliveringApp, upsertContact } from '../delivery/support.ts';
import { openStream, type Stream } from './support.ts';

let t: TestApp;
let receiver: Receiver;
let org: { orgId: string; userId: string; publicKey: string; internalKey: string };
const streams: Stream[] = [];
const open = async (...args: Parameters<typeof openStream>) => {
  const s = await openStream(...args);
  streams.push(s);
  return s;
};

beforeAll(async () => {
  t = await startDeliveringApp();
  receiver = await startReceiver();
  org = await t.newOrg({ plan: 'max' });
});
afterAll(async () => {
  for (const s of streams) s.close();
  await receiver?.close();
  await t?.close();
});

/** Another user of the organization with a role and an Internal key. */
async function userKey(orgId: string, role: 'admin' | 'member') {
  const id = randomUUID();
  await t.sql(`insert into users (id, organization_id, email, password_hash, role) values (?, ?, ?, 'unused', ?)`, [
    id,
    orgId,
    `${role}-${id}@example.com`,
    role,
  ]);
  return t.newKey({ orgId, userId: id, name: role, type: 'internal' });
}

async function until(ok: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('GET /api/webhooks/listen: who may', () => {
  it('refuses no key (401), a Public API key (403 wrong_api_surface) and a member (403 forbidden_role)', async () => {
    const none = await fetch(`${t.origin}/api/webhooks/listen`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 'unauthorized' });
    expect(await open(t, org.publicKey)).toMatchObject({ status: 403, error: { code: 'wrong_api_surface' } });
    expect(await open(t, await userKey(org.orgId, 'member'))).toMatchObject({ status: 403, error: { code: 'forbidden_role' } });
    expect(listenHubOf(t.runtime.deps).sessionCount).toBe(0);
  });

  it('refuses an unknown event in the filter with 400 validation_failed naming it', async () => {
    const s = await open(t, org.internalKey, { events: 'contact.created,contact.teleported' });
    expect(s.status).toBe(400);
    expect(s.error).toMatchObject({ code: 'validation_failed' });
    expect(s.error!.error).toContain('"contact.teleported"');
  });
});

describe('GET /api/webhooks/listen: the stream', () => {
  it('announces a whsec_ secret first, the same on every listen of that person, another for another person', async () => {
    const a = await open(t, org.internalKey);
    expect(a.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(a.ready).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/), events: null, resumed: null });
    const secondKey = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'second', type: 'internal' });
    const b = await open(t, secondKey, { events: 'contact.updated' });
    expect(b.ready).toEqual({ secret: a.ready.secret, events: ['contact.updated'], resumed: null });
    const admin = await open(t, await userKey(org.orgId, 'admin'));
    expect(admin.ready.secret).not.toBe(a.ready.secret);
    // A signed-in session of the same person listens with the same secret.
    const token = generateToken('lws_');
    await t.sql(`insert into sessions (organization_id, user_id, token_hash, user_epoch, expires_at) values (?, ?, ?, 0, ?)`, [
      org.orgId,
      org.userId,
      hashKey(token),
      new Date(t.clock.now().getTime() + 86_400_000),
    ]);
    const session = await open(t, token);
    expect(session.ready.secret).toBe(a.ready.secret);
    for (const s of [a, b, admin, session]) s.close();
  });

  it('streams an upsert with the exact bytes a real endpoint receives, signed with the listen secret', async () => {
    const endpoint = await insertEndpoint(t, org.orgId, `${receiver.origin}/hook`, { events: ['contact.created'] });
    const s = await open(t, org.internalKey);
    const before = receiver.requests.length;
    await upsertContact(t, org.publicKey);
    const d = await s.nextDelivery();
    const [real] = (await receiver.waitFor(before + 1)).slice(before);
    expect(d.event).toBe('contact.created');
    expect(Buffer.from(d.body, 'utf8').equals(real!.rawBody)).toBe(true);
    const [row] = await t.sql<{ id: string }>(`select id from outbox_events where organization_id = ? order by created_at desc limit 1`, [
      org.orgId,
    ]);
    expect(d.id).toBe(row!.id);
    // The frame's body carries the same id, first: the event's, as every delivery of it does.
    expect(Object.keys(JSON.parse(d.body))[0]).toBe('id');
    expect(JSON.parse(d.body).id).toBe(row!.id);
    expect(d.headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'Leadwire-Webhooks/1.0',
      'X-Webhook-Signature': createHmac('sha256', s.ready.secret).update(d.body).digest('hex'),
      'X-Webhook-Event': 'contact.created',
      'X-Webhook-Timestamp': expect.stringMatching(/^\d+$/),
      'X-Webhook-Id': expect.any(String),
      'webhook-id': row!.id,
      'webhook-timestamp': d.headers['X-Webhook-Timestamp'],
      'webhook-signature': expect.stringMatching(/^v1,/),
    });
    // The same headers the engine signs, with another secret: only the signatures and ids differ.
    expect(real!.headers['x-webhook-signature']).toBe(createHmac('sha256', endpoint.secret).update(real!.rawBody).digest('hex'));
    s.close();
  });

  it('sends only the events asked for, and only the organization\u2019s own', async () => {
    const other = await t.newOrg({ plan: 'max' });
    const s = await open(t, org.internalKey, { events: 'contact.updated' });
    await upsertContact(t, other.publicKey, 'same@example.com');
    const email = await upsertContact(t, org.publicKey); // contact.created: filtered out
    const res = await fetch(`${t.v1}/contacts/upsert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.publicKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, lastName: 'Lovelace' }),
    });
    expect(res.status).toBe(200);
    const d = await s.nextDelivery();
    expect(d.event).toBe('contact.updated');
    expect(JSON.parse(d.body).data.contact).toMatchObject({ email, lastName: 'Lovelace' });
    expect(s.events.filter((e) => e.event === 'delivery')).toHaveLength(1);
    s.close();
  });

  it('ends the session when the client goes away, and the organization is no longer streamed to it', async () => {
    const hub = listenHubOf(t.runtime.deps);
    await until(() => hub.sessionCount === 0, 'earlier streams closed');
    const s = await open(t, org.internalKey);
    expect(hub.sessionCount).toBe(1);
    s.close();
    await until(() => hub.sessionCount === 0, 'the session ended');
  });

  it('resumes after a dropped connection with Last-Event-ID, and says when it cannot', async () => {
    const first = await open(t, org.internalKey);
    await upsertContact(t, org.publicKey);
    const seen = await first.nextDelivery();
    first.close();
    const email = await upsertContact(t, org.publicKey);
    const again = await open(t, org.internalKey, { lastEventId: seen.id });
    expect(again.ready.resumed).toBe(true);
    const missed = await again.nextDelivery();
    expect(JSON.parse(missed.body).data.contact.email).toBe(email);
    const unknown = await open(t, org.internalKey, { lastEventId: randomUUID() });
    expect(unknown.ready.resumed).toBe(false);
    again.close();
    unknown.close();
  });
});

describe('the notification connection', () => {
  it('ends every stream with reason interrupted when it is lost, and a new stream listens again', async () => {
    const s = await open(t, org.internalKey);
    await upsertContact(t, org.publicKey);
    const before = await s.nextDelivery();
    const killed = await t.sql<{ ok: boolean }>(
      `select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and query ilike 'listen leadwire_listen%'`,
    );
    expect(killed).toEqual([{ ok: true }]);
    await s.ended;
    expect(s.events.at(-1)).toMatchObject({ event: 'end', data: JSON.stringify({ reason: 'interrupted' }) });
    // Events notified while the connection was down never reached the process: a resume must say so.
    const again = await open(t, org.internalKey, { lastEventId: before.id });
    expect(again.ready.resumed).toBe(false);
    const email = await upsertContact(t, org.publicKey);
    expect(JSON.parse((await again.nextDelivery()).body).data.contact.email).toBe(email);
    again.close();
  });
});

describe('listener rows', () => {
  it('are removed by the hourly cleanup once expired (a process that died while streaming), live ones kept', async () => {
    const other = await t.newOrg();
    const now = t.clock.now();
    await t.sql(`insert into webhook_listeners (organization_id, process_key, expires_at) values (?, ?, ?), (?, ?, ?)`, [
      other.orgId,
      randomUUID(),
      new Date(now.getTime() - 1_000),
      other.orgId,
      randomUUID(),
      new Date(now.getTime() + 60_000),
    ]);
    expect((await runCleanup(t.runtime.deps.db, now)).webhookListeners).toBe(1);
    expect(await t.sql(`select organization_id from webhook_listeners where organization_id = ?`, [other.orgId])).toHaveLength(1);
    await t.sql(`delete from webhook_listeners where organization_id = ?`, [other.orgId]);
  });
});

describe('GET /api/webhooks/listen: time-outs and shutdown', () => {
  it('outlives the header, request and keep-alive time-outs on heartbeats, then still delivers', async () => {
    const quick = await initTestApp({
      HTTP_HEADERS_TIMEOUT_MS: '100',
      HTTP_REQUEST_TIMEOUT_MS: '100',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '100',
      WEBHOOK_LISTEN_HEARTBEAT_MS: '40',
    });
    try {
      const o = await quick.newOrg({ plan: 'max' });
      const s = await openStream(quick, o.internalKey);
      streams.push(s);
      // 15 heartbeats span more than six times each time-out (and many of Node's time-out checks).
      await s.heartbeatsReached(15);
      await upsertContact(quick, o.publicKey);
      expect((await s.nextDelivery()).event).toBe('contact.created');
      s.close();
    } finally {
      await quick.close();
    }
  });

  it('ends every stream with event: end when the server shuts down, without holding the shutdown', async () => {
    const doomed = await initTestApp();
    const o = await doomed.newOrg({ plan: 'max' });
    const s = await openStream(doomed, o.internalKey);
    streams.push(s);
    expect(await doomed.sql(`select organization_id from webhook_listeners`)).toEqual([{ organization_id: o.orgId }]);
    const started = Date.now();
    await doomed.app.close();
    await s.ended;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(s.events.at(-1)).toMatchObject({ event: 'end', data: JSON.stringify({ reason: 'server_shutdown' }) });
    expect(await doomed.sql(`select organization_id from webhook_listeners`)).toEqual([]);
    await doomed.close();
  });
});
