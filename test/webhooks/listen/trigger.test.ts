import { EXAMPLE_TIMESTAMP } from '#core/events/payload.ts';
import { exampleFor } from '#core/events/catalogue.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { rest } from '../../internal/contacts-support.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { deliveriesOf, expectSigned, insertEndpoint, startDeliveringApp, upsertContact, waitForLog } from '../delivery/support.ts';
import { openStream, type Stream } from './support.ts';

let t: TestApp;
let receiver: Receiver;
let org: { orgId: string; userId: string; publicKey: string; internalKey: string };
const streams: Stream[] = [];

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

const trigger = (body: unknown, key = org.internalKey) => rest(t, 'POST', '/webhooks/trigger', key, body);

describe('POST /api/webhooks/trigger', () => {
  it("sends the catalogue's example, stamped now, to the listen streams and not to subscribed endpoints", async () => {
    const subscribed = await insertEndpoint(t, org.orgId, `${receiver.origin}/all`, { events: ['deal.won', 'contact.created'] });
    const s = await openStream(t, org.internalKey);
    streams.push(s);
    const at = new Date(t.clock.now().getTime() + 60_000);
    t.clock.freeze(at);
    const r = await trigger({ event: 'deal.won' });
    t.clock.unfreeze();
    expect(r.status).toBe(200);
    const example = exampleFor('deal.won');
    expect(r.body).toEqual({
      id: expect.any(String),
      event: 'deal.won',
      payload: { ...example, id: r.body.id, timestamp: at.toISOString() },
      listening: true,
      delivery: null,
      // The catalogue's example: its ids name no record, and the answer says so (issue 18).
      synthetic: true,
    });
    expect(example.timestamp).toBe(EXAMPLE_TIMESTAMP);
    const d = await s.nextDelivery();
    expect(d).toMatchObject({ id: r.body.id, event: 'deal.won' });
    expect(JSON.parse(d.body)).toEqual(r.body.payload);
    // A real event afterwards reaches the endpoint; the example before it never did.
    await upsertContact(t, org.publicKey);
    const log = await waitForLog(t, subscribed.id, 1);
    expect(log.map((l) => l.event)).toEqual(['contact.created']);
    expect(await deliveriesOf(t, subscribed.id)).toHaveLength(1);
    s.close();
  });

  it('with endpointId also delivers it to that one endpoint as a manual delivery, signed with its secret', async () => {
    const target = await insertEndpoint(t, org.orgId, `${receiver.origin}/one`, { events: ['contact.created'] });
    const before = receiver.requests.length;
    const r = await trigger({ event: 'form.submitted', endpointId: target.id });
    expect(r.status).toBe(200);
    expect(r.body.delivery).toEqual({ deliveryId: expect.any(String), event: 'form.submitted', state: 'pending', skipReason: null });
    const got = (await receiver.waitFor(before + 1)).slice(before).find((q) => q.url === '/one')!;
    expectSigned(got, target.secret);
    expect(JSON.parse(got.rawBody.toString('utf8'))).toEqual(r.body.payload);
    expect((await deliveriesOf(t, target.id)).find((x) => x.id === r.body.delivery.deliveryId)).toMatchObject({
      manual: true,
      event_id: null,
    });
  });

  it('says when nobody listens', async () => {
    const lonely = await t.newOrg({ plan: 'max' });
    expect((await trigger({ event: 'ping' }, lonely.internalKey)).body).toMatchObject({ event: 'ping', listening: false, delivery: null });
  });

  it('refuses an unknown event (400 naming it), an unknown endpoint (404), a member (403) and a Public API key (403)', async () => {
    const bad = await trigger({ event: 'contact.teleported' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    expect(JSON.stringify(bad.body)).toContain('contact.teleported');
    const other = await t.newOrg({ plan: 'max' });
    const foreign = await insertEndpoint(t, other.orgId, `${receiver.origin}/foreign`);
    for (const endpointId of [foreign.id, '00000000-0000-4000-8000-000000000000']) {
      expect(await trigger({ event: 'ping', endpointId })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    }
    expect(await deliveriesOf(t, foreign.id)).toEqual([]);
    expect((await trigger({ event: 'ping', endpointId: 'nope' })).status).toBe(400);
    const [member] = await t.sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role) values (?, ?, 'unused', 'member') returning id`,
      [org.orgId, `member-${Date.now()}@example.com`],
    );
    const memberKey = await t.newKey({ orgId: org.orgId, userId: member!.id, name: 'member', type: 'internal' });
    expect(await trigger({ event: 'ping' }, memberKey)).toMatchObject({ status: 403, body: { code: 'forbidden_role' } });
    expect(await trigger({ event: 'ping' }, org.publicKey)).toMatchObject({ status: 403, body: { code: 'wrong_api_surface' } });
  });
});
