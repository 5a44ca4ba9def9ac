import { decodeFeedCursor } from '#core/feed/cursor.ts';
import { dispatchEvents } from '#core/webhooks/delivery/dispatch.ts';
import { hourWindow } from '#core/webhooks/delivery/policy.ts';
import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, expectSigned, insertEndpoint, startDeliveringApp, upsertContact, waitForLog } from './support.ts';

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

const received = (path: string) => rx.requests.filter((r) => r.url === path);
const bodies = (path: string) => received(path).map((r) => JSON.parse(r.rawBody.toString('utf8')));

/**
 * The organization's contact.created events after a feed position, in feed order: what `GET /v1/events?after=&types=` lists (the feed route
 * is another branch's; this reads the same rows in the same order).
 */
async function feedAfter(orgId: string, after: string): Promise<string[]> {
  const at = decodeFeedCursor(after);
  expect(at, `gap.after ${after} is not a feed cursor`).not.toBeNull();
  const rows = await t.sql<{ id: string }>(
    // `types=<your events>`, as gap.after's description says: the limit's own webhook.limit_reached is in the feed too.
    `select id from outbox_events where organization_id = ? and event = 'contact.created' and (txid, seq) > (?::xid8, ?::bigint)
     order by txid, seq`,
    [orgId, at!.txid, at!.seq],
  );
  return rows.map((r) => r.id);
}

/** The endpoint's automatic deliveries in the order of their events (the rounds' clock reads do not decide it). */
async function inEventOrder(endpointId: string) {
  return t.sql<{ state: string; event_id: string }>(
    `select d.state, d.event_id from webhook_deliveries d join outbox_events o on o.id = d.event_id
     where d.endpoint_id = ? and not d.manual order by o.txid, o.seq`,
    [endpointId],
  );
}

async function gapState(endpointId: string) {
  const [row] = await t.sql<{ gap_skipped: number; gap_txid: string | null; gap_seq: string | null }>(
    'select gap_skipped, gap_txid::text as gap_txid, gap_seq::text as gap_seq from webhook_endpoints where id = ?',
    [endpointId],
  );
  return row!;
}

describe('a delivery after missed events carries gap: { skipped, after }', () => {
  it('after the hourly limit: the next hour’s first delivery counts the skipped events and points the feed at them', async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/gap-limit`, { events: ['contact.created'] });
    const hourStart = hourWindow(t.clock.now());
    t.clock.freeze(new Date(hourStart.getTime() + 30 * 60_000));
    try {
      // A round that read the clock before it stopped would create a delivery at another time (and in another hour).
      await pumpOf(t.runtime.deps).nextRound();
      // 999 of the hour's 1,000 spent already: one more is sent, the three after it are skipped.
      await t.sql('insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 999)', [`webhooks:${org.orgId}`, hourStart]);
      for (let i = 0; i < 4; i++) {
        t.clock.advance(1);
        await upsertContact(t, org.publicKey);
        await waitForLog(t, endpoint.id, i + 1);
      }
      const before = await inEventOrder(endpoint.id);
      expect(before.map((d) => d.state)).toEqual(['succeeded', 'skipped', 'skipped', 'skipped']);
      const missed = before.filter((d) => d.state === 'skipped').map((d) => d.event_id);
      expect((await gapState(endpoint.id)).gap_skipped).toBe(3);

      t.clock.set(new Date(hourStart.getTime() + 60 * 60_000));
      await pumpOf(t.runtime.deps).nextRound();
      await upsertContact(t, org.publicKey);
      await waitForLog(t, endpoint.id, 5);
      t.clock.advance(1);
      await upsertContact(t, org.publicKey);
      await waitForLog(t, endpoint.id, 6);

      const [first, gapped, next] = bodies('/gap-limit');
      expect(first).not.toHaveProperty('gap');
      expect(next).not.toHaveProperty('gap');
      expect(Object.keys(gapped)).toEqual(['id', 'event', 'timestamp', 'source', 'data', 'gap']);
      expect(gapped.gap).toEqual({ skipped: 3, after: expect.any(String) });
      expectSigned(received('/gap-limit')[1]!, endpoint.secret);
      // The feed after gap.after lists exactly the missed events first, then this delivery's event.
      const feed = await feedAfter(org.orgId, gapped.gap.after);
      expect(feed.slice(0, 3)).toEqual(missed);
      expect(feed[3]).toBe(gapped.id);
      // Handed out once: the endpoint's count is back to 0.
      expect(await gapState(endpoint.id)).toEqual({ gap_skipped: 0, gap_txid: null, gap_seq: null });

      // Stored as the body: a redelivery sends the same bytes, gap included.
      const delivery = (await deliveriesOf(t, endpoint.id)).find((d) => d.event_id === gapped.id)!;
      expect(JSON.parse(delivery.body).gap).toEqual(gapped.gap);
      const again = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`, org.internalKey);
      expect(again.status).toBe(202);
      await waitForLog(t, endpoint.id, 7);
      expect(received('/gap-limit')[3]!.rawBody.equals(received('/gap-limit')[1]!.rawBody)).toBe(true);
    } finally {
      t.clock.unfreeze();
    }
  });

  it('after the endpoint was disabled: the first delivery once enabled again, for that endpoint only', async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const off = await insertEndpoint(t, org.orgId, `${rx.origin}/gap-disabled`, { events: ['contact.created'], enabled: false });
    const on = await insertEndpoint(t, org.orgId, `${rx.origin}/gap-enabled`, { events: ['contact.created'] });
    await upsertContact(t, org.publicKey);
    await upsertContact(t, org.publicKey);
    await waitForLog(t, off.id, 2);
    const missed = (await inEventOrder(off.id)).map((d) => d.event_id);
    expect((await inEventOrder(off.id)).map((d) => d.state)).toEqual(['skipped', 'skipped']);
    // A test ping while disabled is sent, and neither carries nor takes the gap.
    expect((await internalRest(t, 'POST', `/webhooks/${off.id}/test`, org.internalKey)).status).toBe(202);
    await waitForLog(t, off.id, 3);
    expect(bodies('/gap-disabled')[0]).toMatchObject({ event: 'ping' });
    expect(bodies('/gap-disabled')[0]).not.toHaveProperty('gap');

    await t.sql('update webhook_endpoints set enabled = true where id = ?', [off.id]);
    await upsertContact(t, org.publicKey);
    await waitForLog(t, off.id, 4);
    const gapped = bodies('/gap-disabled')[1];
    expect(gapped.gap).toEqual({ skipped: 2, after: expect.any(String) });
    const feed = await feedAfter(org.orgId, gapped.gap.after);
    expect(feed.slice(0, 2)).toEqual(missed);
    expect(feed.slice(0, 3)).toContain(gapped.id);
    // The endpoint that was enabled all along missed nothing.
    await waitForLog(t, on.id, 3);
    for (const b of bodies('/gap-enabled')) expect(b).not.toHaveProperty('gap');
  });

  it('counts every skip once when dispatch rounds run in parallel, and keeps the earliest feed place', async () => {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/gap-parallel`, { events: ['contact.created'], enabled: false });
    // Two transactions of 30 events each, queued for dispatch by the outbox trigger.
    const insert = `insert into outbox_events (organization_id, event, payload, created_at)
      select ?, 'contact.created', '{}', now() from generate_series(1, 30)`;
    await t.sql(insert, [org.orgId]);
    await t.sql(insert, [org.orgId]);
    // Six dispatchers of one event per round, beside the app's own pump.
    const drain = async () => {
      while ((await dispatchEvents(t.runtime.deps.db, t.clock.now(), 1)) > 0);
    };
    await Promise.all(Array.from({ length: 6 }, drain));
    const deadline = Date.now() + 10_000;
    while ((await deliveriesOf(t, endpoint.id)).length < 60 && Date.now() < deadline) await drain();
    expect(await deliveriesOf(t, endpoint.id)).toHaveLength(60);
    const [first] = await t.sql<{ txid: string; seq: string }>(
      // Ordered by the columns, not by their text (an output name would win in order by).
      'select o.txid::text as txid, o.seq::text as seq from outbox_events o where organization_id = ? order by o.txid, o.seq limit 1',
      [org.orgId],
    );
    expect(await gapState(endpoint.id)).toEqual({ gap_skipped: 60, gap_txid: first!.txid, gap_seq: first!.seq });
  });
});
