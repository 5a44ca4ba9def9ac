import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, expectSigned, insertEndpoint, upsertContact, waitForLog, startDeliveringApp } from './support.ts';

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  t = await startDeliveringApp();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const bodyOf = (path: string) => rx.requests.filter((r) => r.url === path).map((r) => JSON.parse(r.rawBody.toString('utf8')));

describe("the event's id in every payload", () => {
  it("comes first in the body, is the outbox row's id, and leaves webhook-id (the delivery's) and X-Webhook-Id as they were", async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/event-id`);
    await upsertContact(t, org.publicKey);
    const [line] = await waitForLog(t, endpoint.id, 1);
    const req = rx.requests.find((r) => r.url === '/event-id')!;
    expectSigned(req, endpoint.secret);
    const [row] = await t.sql<{ id: string }>(`select id from outbox_events where organization_id = ? and event = 'contact.created'`, [
      org.orgId,
    ]);
    const text = req.rawBody.toString('utf8');
    expect(text.startsWith(`{"id":"${row!.id}","event":"contact.created","timestamp":`)).toBe(true);
    const [delivery] = await deliveriesOf(t, endpoint.id);
    expect(delivery!.event_id).toBe(row!.id);
    expect(req.headers['webhook-id']).toBe(delivery!.id);
    expect(req.headers['x-webhook-id']).toBe(line!.id);
    expect(req.headers['x-webhook-id']).not.toBe(row!.id);
  });

  it("is a new id for a restored contact's second contact.created, though the contact is the same", async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/restored`, { events: ['contact.created', 'contact.deleted'] });
    const email = await upsertContact(t, org.publicKey);
    const [contact] = await t.sql<{ id: string }>('select id from contacts where organization_id = ? and email = ?', [org.orgId, email]);
    expect((await internalRest(t, 'POST', `/contacts/${contact!.id}/delete`, org.internalKey, {})).status).toBe(200);
    expect((await internalRest(t, 'POST', `/contacts/${contact!.id}/restore`, org.internalKey, {})).status).toBe(200);
    await waitForLog(t, endpoint.id, 3);
    const created = bodyOf('/restored').filter((b) => b.event === 'contact.created');
    expect(created).toHaveLength(2);
    expect(created.map((b) => b.data.contact.id)).toEqual([contact!.id, contact!.id]);
    // Deliveries of one endpoint may arrive in either order: one of the two is the restore's.
    expect(created.map((b) => b.data.restored === true).sort()).toEqual([false, true]);
    expect(created[0].id).toMatch(UUID);
    expect(created[1].id).toMatch(UUID);
    expect(created[0].id).not.toBe(created[1].id);
  });

  it('is a fresh one on every test ping', async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/ping-id`);
    for (let i = 0; i < 2; i++) expect((await internalRest(t, 'POST', `/webhooks/${endpoint.id}/test`, org.internalKey)).status).toBe(202);
    await waitForLog(t, endpoint.id, 2);
    const pings = bodyOf('/ping-id');
    expect(pings.map((p) => Object.keys(p))).toEqual([
      ['id', 'event', 'timestamp', 'data'],
      ['id', 'event', 'timestamp', 'data'],
    ]);
    expect(pings[0].id).toMatch(UUID);
    expect(pings[1].id).toMatch(UUID);
    expect(pings[0].id).not.toBe(pings[1].id);
  });
});
