import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InternalRouter } from '@leadwire/core';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';

const SECRET = 'provider-shared-secret-for-tests';
const FROM = '+15005550006';

/** A real local SMS gateway: records what it is sent and accepts or refuses on demand. */
interface Gateway {
  url: string;
  accept: boolean;
  received: { authorization: string | undefined; body: { to: string; from: string; body: string } }[];
  server: Server;
}

let t: TestApp;
let gateway: Gateway;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let other: Awaited<ReturnType<TestApp['newOrg']>>;

beforeAll(async () => {
  const received: Gateway['received'] = [];
  let seq = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      received.push({ authorization: req.headers.authorization, body: JSON.parse(raw) });
      if (!gateway.accept) return void res.writeHead(500).end('{"error":"down"}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `gw-${++seq}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/messages`, accept: true, received, server };
  t = await initTestApp({
    SMS_PROVIDER: 'http',
    SMS_PROVIDER_URL: gateway.url,
    SMS_PROVIDER_API_KEY: 'gateway-api-key',
    SMS_FROM_NUMBER: FROM,
    SMS_INBOUND_SECRET: SECRET,
  });
  [org, other] = await Promise.all([t.newOrg(), t.newOrg()]);
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => gateway?.server.close(resolve));
});
beforeEach(() => {
  gateway.accept = true;
});

const client = (key: string) =>
  createTRPCClient<InternalRouter>({ links: [httpLink({ url: `${t.origin}/api/trpc`, headers: { authorization: `Bearer ${key}` } })] });

async function rest(method: string, path: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${t.origin}/api${path}`, {
    method,
    headers: {
      ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...opts.headers,
    },
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

async function newContact(orgId: string, fields: { phone?: string | null; smsConsent?: boolean } = {}): Promise<string> {
  const [row] = await t.sql<{ id: string }>(
    `insert into contacts (organization_id, email, first_name, phone, sms_consent) values (?, ?, 'Ada', ?, ?) returning id`,
    [orgId, `c-${Math.random().toString(36).slice(2)}@example.com`, fields.phone ?? null, fields.smsConsent ?? false],
  );
  return row!.id;
}

async function eventsOf(orgId: string, contactId: string) {
  return t.sql<{ event: string; payload: any }>(
    `select event, payload from outbox_events where organization_id = ? and payload->'data'->'contact'->>'id' = ? order by created_at, event`,
    [orgId, contactId],
  );
}

async function countRows(table: 'messages' | 'conversations', contactId: string): Promise<number> {
  const [row] = await t.sql<{ n: string }>(`select count(*) as n from ${table} where contact_id = ?`, [contactId]);
  return Number(row!.n);
}

const errorOf = async (p: Promise<unknown>) => {
  const err = await p.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TRPCClientError);
  return (err as TRPCClientError<InternalRouter>).data as { httpStatus: number; body: { code: string } };
};

describe('sending SMS', () => {
  it('texts a consenting contact through the provider, opens the conversation once and emits message.sent', async () => {
    const contactId = await newContact(org.orgId, { phone: '+1 (555) 010-2000', smsConsent: true });
    const first = await client(org.internalKey).messages.send.mutate({ contactId, body: 'Hello Ada' });
    expect(first).toMatchObject({
      contactId,
      direction: 'outbound',
      from: FROM,
      to: '+1 (555) 010-2000',
      body: 'Hello Ada',
      status: 'sent',
    });
    expect(first.providerMessageId).toMatch(/^gw-\d+$/);
    expect(gateway.received.at(-1)).toEqual({
      authorization: 'Bearer gateway-api-key',
      body: { to: '+1 (555) 010-2000', from: FROM, body: 'Hello Ada' },
    });

    // REST too, with its 201.
    const second = await rest('POST', '/messages/send', { key: org.internalKey, body: { contactId, body: 'Still there?' } });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ conversationId: first.conversationId, status: 'sent' });

    expect(await countRows('conversations', contactId)).toBe(1);
    const events = await eventsOf(org.orgId, contactId);
    expect(events.map((e) => e.event).sort()).toEqual(['conversation.created', 'message.sent', 'message.sent']);
    expect(events.every((e) => e.payload.source === 'app')).toBe(true);
    const sent = events.find((e) => e.event === 'message.sent')!;
    expect(sent.payload.data.message).toMatchObject({ contactId, conversationId: first.conversationId });
    expect(sent.payload.data.contact).toEqual({ id: contactId, firstName: 'Ada', email: expect.any(String) });

    const list = await client(org.internalKey).messages.list.query({ id: contactId });
    expect(list.conversationId).toBe(first.conversationId);
    expect(list.messages.map((m) => m.body)).toEqual(['Hello Ada', 'Still there?']);
  });

  it('refuses without SMS consent with 409 sms_consent_required, and without a phone, storing and sending nothing', async () => {
    const noConsent = await newContact(org.orgId, { phone: '+15550102001' });
    const sentBefore = gateway.received.length;
    expect(await errorOf(client(org.internalKey).messages.send.mutate({ contactId: noConsent, body: 'hi' }))).toMatchObject({
      httpStatus: 409,
      body: { code: 'sms_consent_required' },
    });
    expect(await rest('POST', '/messages/send', { key: org.internalKey, body: { contactId: noConsent, body: 'hi' } })).toMatchObject({
      status: 409,
      body: { code: 'sms_consent_required', error: expect.stringMatching(/consent/) },
    });
    const noPhone = await newContact(org.orgId, { smsConsent: true });
    expect(await rest('POST', '/messages/send', { key: org.internalKey, body: { contactId: noPhone, body: 'hi' } })).toMatchObject({
      status: 409,
      body: { code: 'contact_has_no_phone' },
    });
    for (const id of [noConsent, noPhone]) {
      expect(await countRows('messages', id)).toBe(0);
      expect(await countRows('conversations', id)).toBe(0);
      expect(await eventsOf(org.orgId, id)).toEqual([]);
    }
    expect(gateway.received.length).toBe(sentBefore);
  });

  it('records a text the provider refused as failed, without message.sent', async () => {
    const contactId = await newContact(org.orgId, { phone: '+15550102002', smsConsent: true });
    gateway.accept = false;
    const r = await client(org.internalKey).messages.send.mutate({ contactId, body: 'Will not go' });
    expect(r).toMatchObject({ status: 'failed', providerMessageId: null });
    const [row] = await t.sql<{ status: string }>(`select status from messages where id = ?`, [r.id]);
    expect(row!.status).toBe('failed');
    expect((await eventsOf(org.orgId, contactId)).map((e) => e.event)).toEqual(['conversation.created']);
  });

  it('keeps organizations apart: another tenant cannot text or read a contact', async () => {
    const contactId = await newContact(org.orgId, { phone: '+15550102003', smsConsent: true });
    expect(await errorOf(client(other.internalKey).messages.send.mutate({ contactId, body: 'hi' }))).toMatchObject({
      httpStatus: 404,
      body: { code: 'not_found' },
    });
    expect(await rest('GET', `/contacts/${contactId}/messages`, { key: other.internalKey })).toMatchObject({ status: 404 });
    expect(await rest('POST', '/messages/send', { key: org.publicKey, body: { contactId, body: 'hi' } })).toMatchObject({
      status: 403,
      body: { code: 'wrong_api_surface' },
    });
    expect(await countRows('messages', contactId)).toBe(0);
  });
});

describe('inbound SMS from the provider', () => {
  const inbound = (body: Record<string, unknown>, secret: string | null = SECRET) =>
    rest('POST', '/messages/inbound', { body, headers: secret === null ? {} : { 'x-provider-secret': secret } });

  it('needs the shared secret: missing or wrong is 401, and nothing is stored', async () => {
    const contactId = await newContact(org.orgId, { phone: '+15550103000' });
    const msg = { orgId: org.orgId, from: '+15550103000', to: FROM, body: 'hi', providerMessageId: 'in-auth-1' };
    expect(await inbound(msg, null)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await inbound(msg, `${SECRET}x`)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    // A user's credentials are not the provider's.
    expect(await rest('POST', '/messages/inbound', { key: org.internalKey, body: msg })).toMatchObject({ status: 401 });
    expect(await countRows('messages', contactId)).toBe(0);
  });

  it('stores a text from a known number once, emitting conversation.created and message.received', async () => {
    const contactId = await newContact(org.orgId, { phone: '(555) 010-4000 ' });
    const msg = { orgId: org.orgId, from: '555-010-4000', to: FROM, body: 'Call me back', providerMessageId: 'in-1' };
    // The provider re-delivers, concurrently at first and later again: one message, one event.
    const burst = await Promise.all([inbound(msg), inbound(msg), inbound(msg)]);
    expect(burst.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(burst.map((r) => r.body.status).sort()).toEqual(['duplicate', 'duplicate', 'stored']);
    const first = burst.find((r) => r.body.status === 'stored')!;
    expect(first.body).toMatchObject({ messageId: expect.any(String), conversationId: expect.any(String) });
    for (const r of burst) expect(r.body.messageId).toBe(first.body.messageId);
    expect((await inbound(msg)).body).toEqual({
      status: 'duplicate',
      messageId: first.body.messageId,
      conversationId: first.body.conversationId,
    });
    expect(await countRows('messages', contactId)).toBe(1);

    const second = await inbound({ ...msg, body: 'Anyone?', providerMessageId: 'in-2' });
    expect(second.body).toMatchObject({ status: 'stored', conversationId: first.body.conversationId });

    const events = await eventsOf(org.orgId, contactId);
    expect(events.map((e) => e.event)).toEqual(['conversation.created', 'message.received', 'message.received']);
    expect(events.every((e) => e.payload.source === 'inbound')).toBe(true);
    expect(events[1]!.payload.data.message).toMatchObject({
      direction: 'inbound',
      status: 'received',
      body: 'Call me back',
      providerMessageId: 'in-1',
    });

    const list = await client(org.internalKey).messages.list.query({ id: contactId });
    expect(list.messages.map((m) => [m.direction, m.body])).toEqual([
      ['inbound', 'Call me back'],
      ['inbound', 'Anyone?'],
    ]);
  });

  it('matches only in the organization named, and acknowledges an unknown sender without storing', async () => {
    const theirs = await newContact(other.orgId, { phone: '+15550105000' });
    const r = await inbound({ orgId: org.orgId, from: '+15550105000', to: FROM, body: 'hi', providerMessageId: 'in-x-1' });
    expect(r).toMatchObject({ status: 200, body: { status: 'no_matching_contact', messageId: null } });
    expect(await countRows('messages', theirs)).toBe(0);
    const unknownOrg = await inbound({
      orgId: '00000000-0000-4000-8000-000000000000',
      from: '+15550000001',
      to: FROM,
      body: 'hi',
      providerMessageId: 'x',
    });
    expect(unknownOrg).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('refuses a malformed payload with validation_failed', async () => {
    expect(await inbound({ orgId: org.orgId, from: '+15550106000', body: 'no to, no id' })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed' },
    });
  });
});

describe('inbound SMS without SMS_INBOUND_SECRET configured', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await initTestApp();
  });
  afterAll(async () => bare?.close());

  it('refuses every call with 401, whatever secret is sent', async () => {
    const attempts: Record<string, string>[] = [{}, { 'x-provider-secret': '' }, { 'x-provider-secret': 'anything-at-all-here' }];
    for (const headers of attempts) {
      const res = await fetch(`${bare.origin}/api/messages/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          orgId: '00000000-0000-4000-8000-000000000000',
          from: '+15550000001',
          to: FROM,
          body: 'hi',
          providerMessageId: 'p',
        }),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthorized' });
    }
  });
});
