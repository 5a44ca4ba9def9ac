/**
 * Issue 19 section 4, fewer index and queue writes per event: the dispatch queue (outbox_pending) has one index, its
 * primary key (created_at, event_id), which is also the order a dispatch round claims in; and it holds only the
 * events that have somewhere to go (an endpoint of the organization subscribed to the type, enabled or not). Each
 * queued event is a row and an index entry written, then claimed and deleted by a round.
 */
import { dispatchEvents } from '#core/webhooks/delivery/dispatch.ts';
import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { insertEndpoint, upsertContact } from './support.ts';

/** Never called: the rounds here create deliveries and nothing sends them. */
const NOWHERE = 'https://receiver.invalid/hook';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
  // No pump of this process dispatches behind the test's back: rounds run by hand.
  await pumpOf(t.runtime.deps).lock.acquire();
});
afterAll(async () => t?.close());

const pendingOf = (orgId: string) =>
  t.sql<{ event: string; email: string }>(
    `select o.event, o.payload->'data'->'contact'->>'email' as email
     from outbox_pending q join outbox_events o on o.id = q.event_id where o.organization_id = ? order by q.created_at`,
    [orgId],
  );

describe('the dispatch queue', () => {
  it('has one index: its primary key, in claim order', async () => {
    const indexes = await t.sql<{ indexname: string; indexdef: string }>(
      `select indexname, indexdef from pg_indexes where tablename = 'outbox_pending' order by indexname`,
    );
    expect(indexes.map((i) => i.indexname)).toEqual(['outbox_pending_pkey']);
    expect(indexes[0]!.indexdef).toMatch(/\(created_at, event_id\)$/);
  });

  it('claims the oldest events first, off the key in order (no sort), and takes each off the queue once', async () => {
    await t.sql('delete from outbox_pending');
    const org = await t.newOrg();
    await insertEndpoint(t, org.orgId, NOWHERE);
    await t.sql('delete from outbox_pending');
    const start = t.clock.now().getTime();
    // Written in this order, but the second one's clock is earlier: dispatch follows created_at, not insertion.
    t.clock.set(new Date(start + 60_000));
    const later = await upsertContact(t, org.publicKey);
    t.clock.set(new Date(start + 1_000));
    const earlier = await upsertContact(t, org.publicKey);
    expect((await pendingOf(org.orgId)).map((e) => e.email)).toEqual([earlier, later]);

    const plan = await t.sql<{ 'QUERY PLAN': string }>(
      `explain select created_at, event_id from outbox_pending order by created_at, event_id limit 500 for update skip locked`,
    );
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index Scan using outbox_pending_pkey/);
    expect(text).not.toMatch(/Sort/);

    expect(await dispatchEvents(t.runtime.deps.db, t.clock.now(), 1)).toBe(1);
    expect((await pendingOf(org.orgId)).map((e) => e.email)).toEqual([later]);
    expect(await dispatchEvents(t.runtime.deps.db, t.clock.now(), 1)).toBe(1);
    expect(await pendingOf(org.orgId)).toEqual([]);
    expect(await dispatchEvents(t.runtime.deps.db, t.clock.now(), 1)).toBe(0);
  });

  it('queues only the events an endpoint subscribes to: none for an organization without one, or of a type none takes', async () => {
    const quiet = await t.newOrg();
    const busy = await t.newOrg();
    // Subscribed to updates only, and disabled: a disabled endpoint still gets its skipped deliveries, so it counts.
    await insertEndpoint(t, busy.orgId, NOWHERE, { events: ['contact.updated'], enabled: false });
    const insert = `insert into outbox_events (organization_id, event, payload) values (?, 'contact.created', '{}'), (?, 'contact.updated', '{}')`;
    await t.sql(insert, [quiet.orgId, quiet.orgId]);
    await t.sql(insert, [busy.orgId, busy.orgId]);
    expect(await pendingOf(quiet.orgId)).toEqual([]);
    expect((await pendingOf(busy.orgId)).map((e) => e.event)).toEqual(['contact.updated']);
    // Every event is still written to the outbox (the feed and the timelines read it there).
    const written = await t.sql<{ n: number }>('select count(*)::int as n from outbox_events where organization_id in (?, ?)', [
      quiet.orgId,
      busy.orgId,
    ]);
    expect(written[0]!.n).toBe(4);
  });
});
