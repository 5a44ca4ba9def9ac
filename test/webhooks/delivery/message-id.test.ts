import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, insertEndpoint, upsertContact, waitForLog, startDeliveringApp } from './support.ts';

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

/** The Standard Webhooks signature recomputed from the spec: it must sign the webhook-id the receiver got. */
function signsItsId(req: ReceivedRequest, secret: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const content = Buffer.concat([
    Buffer.from(`${String(req.headers['webhook-id'])}.${String(req.headers['webhook-timestamp'])}.`),
    req.rawBody,
  ]);
  return String(req.headers['webhook-signature']) === `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
}

describe('webhook-id, the Standard Webhooks message id', () => {
  it('stays the same across retries, a redelivery and a recovery of one event to one endpoint; X-Webhook-Id is new each time', async () => {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/message-id`);
    const answers = [500, 200, 200, 500, 200, 200];
    let n = 0;
    rx.respond((req, res) => void res.writeHead(req.url === '/message-id' ? (answers[n++] ?? 200) : 200).end());
    const seen = () => rx.requests.filter((r) => r.url === '/message-id');

    // Event A: a failed attempt, then its retry succeeds; then the owner redelivers it.
    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 1);
    const [a] = await deliveriesOf(t, endpoint.id);
    t.clock.set(a!.next_attempt_at!);
    await waitForLog(t, endpoint.id, 2);
    const redelivered = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/deliveries/${a!.id}/redeliver`, org.internalKey);
    expect(redelivered.status).toBe(202);
    await waitForLog(t, endpoint.id, 3);

    // Event B: its first attempt fails; the endpoint is disabled before the retry (skipped), enabled again, recovered,
    // and the recovered copy is redelivered too.
    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 4);
    const b = (await deliveriesOf(t, endpoint.id)).find((d) => !d.manual && d.id !== a!.id)!;
    await t.sql('update webhook_endpoints set enabled = false where id = ?', [endpoint.id]);
    t.clock.set(b.next_attempt_at!);
    await waitForLog(t, endpoint.id, 5);
    expect((await deliveriesOf(t, endpoint.id)).find((d) => d.id === b.id)).toMatchObject({ state: 'skipped' });
    await t.sql('update webhook_endpoints set enabled = true where id = ?', [endpoint.id]);
    const since = new Date(t.clock.now().getTime() - 3_600_000).toISOString();
    const recovered = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/recover`, org.internalKey, { since });
    expect(recovered.body).toEqual({ replayed: 1, remaining: 0 });
    await waitForLog(t, endpoint.id, 6);
    const replay = (await deliveriesOf(t, endpoint.id)).find((d) => d.replay_of === b.id)!;
    const again = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/deliveries/${replay.id}/redeliver`, org.internalKey);
    expect(again.status).toBe(202);
    await waitForLog(t, endpoint.id, 7);

    const requests = seen();
    expect(requests.map((r) => JSON.parse(r.rawBody.toString('utf8')).event)).toEqual(Array(6).fill('contact.created'));
    const [a1, a2, aRedelivered, b1, bRecovered, bRedelivered] = requests.map((r) => r.headers['webhook-id']);
    // A's id is its first delivery's (as before); B's too; each kept on every later copy.
    expect([a1, a2, aRedelivered]).toEqual([a!.id, a!.id, a!.id]);
    expect([b1, bRecovered, bRedelivered]).toEqual([b.id, b.id, b.id]);
    expect(a!.id).not.toBe(b.id);
    // The bodies of one event are the same bytes; its copies are told apart by X-Webhook-Id only.
    expect(new Set(requests.map((r) => r.headers['x-webhook-id'])).size).toBe(6);
    expect(requests[2]!.rawBody.equals(requests[0]!.rawBody)).toBe(true);
    expect(requests[5]!.rawBody.equals(requests[3]!.rawBody)).toBe(true);
    for (const r of requests) expect(signsItsId(r, endpoint.secret)).toBe(true);
    // The body's id is the event's (its outbox row's), the same on every copy, unlike webhook-id, which is per endpoint.
    const [eventA, eventB] = [a!.event_id, b.event_id];
    expect(eventA).not.toBe(eventB);
    expect(requests.map((r) => JSON.parse(r.rawBody.toString('utf8')).id)).toEqual([eventA, eventA, eventA, eventB, eventB, eventB]);
    const stored = await t.sql<{ id: string; payload: { id: string } }>('select id, payload from outbox_events where id = any(?::uuid[])', [
      [eventA, eventB],
    ]);
    for (const row of stored) expect(row.payload.id).toBe(row.id);

    // The delivery log shows each attempt's message id beside its own delivery id.
    const log = await internalRest(t, 'GET', `/webhooks/${endpoint.id}/deliveries`, org.internalKey);
    const sent = log.body.items.filter((i: { attempt: number }) => i.attempt > 0);
    expect(sent).toHaveLength(6);
    for (const item of sent) {
      const req = requests.find((r) => r.headers['x-webhook-id'] === item.id)!;
      expect(item.messageId).toBe(req.headers['webhook-id']);
    }
    // Five deliveries: A, its redelivery, B, its recovery, and the recovery's redelivery.
    expect(new Set(sent.map((i: { deliveryId: string }) => i.deliveryId)).size).toBe(5);
  });

  it('differs between endpoints and between events: it names one event to one endpoint', async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const one = await insertEndpoint(t, org.orgId, `${rx.origin}/message-id-one`);
    const two = await insertEndpoint(t, org.orgId, `${rx.origin}/message-id-two`);
    await upsertContact(t, org.publicKey);
    await upsertContact(t, org.publicKey);
    await waitForLog(t, one.id, 2);
    await waitForLog(t, two.id, 2);
    const ids = rx.requests.filter((r) => r.url.startsWith('/message-id-')).map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(4);
  });
});
