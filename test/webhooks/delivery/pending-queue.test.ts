/**
 * Issue 19 section 4, fewer index writes per event: the dispatch queue (outbox_pending) has one index, its primary key
 * (created_at, event_id), which is also the order a dispatch round claims in. Every event inserts its queue row and
 * the round deletes it, so each index more was a B-tree insert and delete per event.
 */
import { dispatchEvents } from '#core/webhooks/delivery/dispatch.ts';
import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { upsertContact } from './support.ts';

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
});
