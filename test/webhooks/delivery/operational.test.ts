import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import type { EventName } from '#core/events/names.ts';
import { hourWindow } from '#core/webhooks/delivery/policy.ts';
import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
import { readAll, settle } from '../../events/feed-support.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, endpointRow, expectSigned, insertEndpoint, startDeliveringApp, upsertContact, waitForLog } from './support.ts';

/** Issue 19's operational events, delivered to real receivers like any other event. */

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  t = await startDeliveringApp();
  rx.respond((req, res) => void res.writeHead(req.url?.startsWith('/down') ? 503 : 200).end());
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

const OPERATIONAL = ['webhook.endpoint_disabled', 'webhook.endpoint_enabled', 'webhook.delivery_failed', 'webhook.limit_reached'];

/** The bodies `path` received, each checked against its catalogue schema (strict: no field the catalogue lacks). */
function bodies(path: string) {
  return rx.requests
    .filter((r) => r.url === path)
    .map((r) => {
      const body = JSON.parse(r.rawBody.toString('utf8'));
      // `gap` belongs to the delivery (the first sent after skips), not to the event.
      const { gap: _gap, ...event } = body;
      expect(EVENT_CATALOGUE[body.event as EventName].payload.parse(event)).toEqual(event);
      return body;
    });
}

/** The organization's outbox events by name: what the changes feed and `leadwire listen` read. */
async function outbox(orgId: string, event: string) {
  return t.sql<{ id: string; payload: { source: string; data: Record<string, unknown> } }>(
    'select id, payload from outbox_events where organization_id = ? and event = ? order by created_at, id',
    [orgId, event],
  );
}

describe('operational events', () => {
  it('a delivery exhausting its 5 attempts emits webhook.delivery_failed once, its 10th failure webhook.endpoint_disabled; none about their own deliveries', async () => {
    const org = await t.newOrg();
    const watch = await insertEndpoint(t, org.orgId, `${rx.origin}/watch-1`, { events: OPERATIONAL });
    // The failing endpoint is subscribed to the operational events too: their deliveries to it fail as well.
    const down = await insertEndpoint(t, org.orgId, `${rx.origin}/down-1`, {
      events: ['contact.created', 'webhook.delivery_failed', 'webhook.endpoint_disabled'],
    });
    t.clock.freeze(t.clock.now());
    try {
      await upsertContact(t, org.publicKey);
      await waitForLog(t, down.id, 1);
      // Past the last retry (32 min): the remaining attempts are due at once.
      t.clock.advance(40 * 60_000);
      await waitForLog(t, down.id, 6);
      const [contactDelivery] = await deliveriesOf(t, down.id);
      expect(contactDelivery).toMatchObject({ state: 'failed', attempts: 5 });
      await waitForLog(t, watch.id, 1);
      const [failed] = bodies('/watch-1');
      expect(failed).toMatchObject({
        event: 'webhook.delivery_failed',
        source: 'system',
        data: {
          delivery: { id: contactDelivery!.id, attempts: 5, lastStatusCode: 503, lastError: 'the receiver answered 503' },
          endpoint: { id: down.id, url: `${rx.origin}/…` },
          eventId: contactDelivery!.event_id,
          eventName: 'contact.created',
        },
      });
      expectSigned(rx.requests.find((r) => r.url === '/watch-1')!, watch.secret);

      // The delivery_failed event's own delivery to the failing endpoint fails 5 times: failures 6 to 10.
      t.clock.advance(40 * 60_000);
      await waitForLog(t, down.id, 11);
      expect(await endpointRow(t, down.id)).toMatchObject({ enabled: false, failure_count: 10 });
      await waitForLog(t, watch.id, 2);
      const reason = '10 deliveries failed in a row; the last one: HTTP 503';
      expect(bodies('/watch-1')[1]).toMatchObject({
        event: 'webhook.endpoint_disabled',
        source: 'system',
        data: { endpoint: { id: down.id, url: `${rx.origin}/…` }, reason, failureCount: 10 },
      });
      // The disabled endpoint's own "disabled" event is recorded skipped, never sent to it.
      const own = (await deliveriesOf(t, down.id)).map((d) => [JSON.parse(d.body).event, d.state, d.attempts, d.skip_reason]);
      expect(own).toEqual([
        ['contact.created', 'failed', 5, null],
        ['webhook.delivery_failed', 'failed', 5, null],
        ['webhook.endpoint_disabled', 'skipped', 0, 'endpoint disabled'],
      ]);
      // Written in the transaction that recorded the 10th failure, which the log line proves committed: one event
      // about the contact's delivery, none about the delivery_failed event's own exhausted delivery.
      expect(await outbox(org.orgId, 'webhook.delivery_failed')).toHaveLength(1);
      expect(await outbox(org.orgId, 'webhook.endpoint_disabled')).toHaveLength(1);
    } finally {
      t.clock.unfreeze();
    }
  });

  it('a user disabling and enabling an endpoint emits webhook.endpoint_disabled and webhook.endpoint_enabled, once each', async () => {
    const org = await t.newOrg();
    const watch = await insertEndpoint(t, org.orgId, `${rx.origin}/watch-2`, { events: OPERATIONAL });
    const other = await insertEndpoint(t, org.orgId, `${rx.origin}/other-2`, { events: ['contact.created'] });
    const [owner] = await t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
    for (let i = 0; i < 2; i++) {
      expect((await internalRest(t, 'POST', `/webhooks/${other.id}/disable`, org.internalKey)).status).toBe(200);
    }
    // Disabling a disabled endpoint changes nothing, and says nothing: the events are written with the change itself.
    expect(await outbox(org.orgId, 'webhook.endpoint_disabled')).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      expect((await internalRest(t, 'POST', `/webhooks/${other.id}/enable`, org.internalKey)).status).toBe(200);
    }
    expect(await outbox(org.orgId, 'webhook.endpoint_enabled')).toHaveLength(1);
    await waitForLog(t, watch.id, 2);
    const endpoint = { id: other.id, url: `${rx.origin}/…` };
    const received = bodies('/watch-2').sort((a, b) => a.event.localeCompare(b.event));
    expect(received).toMatchObject([
      { event: 'webhook.endpoint_disabled', source: 'system', data: { endpoint, reason: `disabled by ${owner!.email}`, failureCount: 0 } },
      { event: 'webhook.endpoint_enabled', source: 'system', data: { endpoint, enabledBy: org.userId } },
    ]);
    // In the changes feed (GET /v1/events, events:read) with the ids the deliveries carried.
    const key = await t.newKey({ orgId: org.orgId, userId: org.userId, type: 'public', name: 'ops', permissions: ['events:read'] });
    await settle(t);
    const { items } = await readAll(t, key, { types: 'webhook.endpoint_disabled,webhook.endpoint_enabled' });
    expect(items.map((i) => i.id).sort()).toEqual(received.map((b) => b.id).sort());

    // A new URL pointing at a private address disables it too, with the reason.
    const patched = await internalRest(t, 'PATCH', `/webhooks/${other.id}`, org.internalKey, { url: 'https://10.0.0.7/hook' });
    expect(patched.body).toMatchObject({ enabled: false });
    const disabled = await outbox(org.orgId, 'webhook.endpoint_disabled');
    expect(disabled).toHaveLength(2);
    expect(disabled.map((d) => d.payload.data)).toContainEqual({
      endpoint: { id: other.id, url: 'https://10.0.0.7/…' },
      reason: (patched.body as { disabledReason: string }).disabledReason,
      failureCount: 0,
    });
  });

  it('reaching the hourly limit emits webhook.limit_reached once per workspace-hour, delivered beyond the limit', async () => {
    const org = await t.newOrg();
    const watch = await insertEndpoint(t, org.orgId, `${rx.origin}/watch-3`, { events: ['contact.created', 'webhook.limit_reached'] });
    const hour = hourWindow(t.clock.now());
    t.clock.freeze(new Date(hour.getTime() + 30 * 60_000));
    try {
      await pumpOf(t.runtime.deps).nextRound();
      // 999 of the hour's 1,000 spent already: the first contact is sent, the next two are skipped.
      await t.sql('insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 999)', [`webhooks:${org.orgId}`, hour]);
      // One contact per dispatch round (a round's batch would skip both at once); the second one's skip adds the limit
      // event's delivery, which the limit does not stop.
      for (const lines of [1, 3, 4]) {
        t.clock.advance(1);
        await upsertContact(t, org.publicKey);
        await waitForLog(t, watch.id, lines);
      }
      const log = await waitForLog(t, watch.id, 4);
      expect(log.map((l) => [l.event, l.outcome]).sort()).toEqual(
        [
          ['contact.created', 'succeeded'],
          ['contact.created', 'skipped'],
          ['contact.created', 'skipped'],
          ['webhook.limit_reached', 'succeeded'],
        ].sort(),
      );
      const limit = { hour: hour.toISOString(), limit: 1000, skipped: 1 };
      expect(bodies('/watch-3').filter((b) => b.event === 'webhook.limit_reached')).toMatchObject([{ source: 'system', data: limit }]);
      expect((await outbox(org.orgId, 'webhook.limit_reached')).map((e) => e.payload.data)).toEqual([limit]);

      // The next hour, already full: its first skip tells again, once.
      const next = new Date(hour.getTime() + 60 * 60_000);
      await t.sql('insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 1000)', [`webhooks:${org.orgId}`, next]);
      t.clock.set(new Date(next.getTime() + 1));
      await pumpOf(t.runtime.deps).nextRound();
      await upsertContact(t, org.publicKey);
      await waitForLog(t, watch.id, 6);
      await upsertContact(t, org.publicKey);
      await waitForLog(t, watch.id, 7);
      expect((await outbox(org.orgId, 'webhook.limit_reached')).map((e) => e.payload.data)).toEqual([
        limit,
        { hour: next.toISOString(), limit: 1000, skipped: 1 },
      ]);
      // Not counted: the hour's counter holds the contact deliveries only.
      const [counter] = await t.sql<{ count: number }>('select count from rate_limit_counters where bucket = ? and window_start = ?', [
        `webhooks:${org.orgId}`,
        hour,
      ]);
      expect(counter!.count).toBe(1002);
    } finally {
      t.clock.unfreeze();
    }
  });
});
