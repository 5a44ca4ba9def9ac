/**
 * Polling triggers (issue 18, "Automation platforms"): a platform's `performList` reads the organization's latest
 * events of a trigger from the outbox, newest first, each with the event's id (platforms de-duplicate on it), over a
 * bounded window of the organization's newest events read through the feed index.
 */
import type { InternalActor } from '#core/auth/actor.ts';
import { pollTrigger } from '#core/automation/triggers.ts';
import { RECENT_EVENTS } from '#core/automation/sql.ts';
import { bind } from '#db/statements.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { automation } from './support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

const poll = (key: string, query: string) => automation(t, 'GET', `/triggers/${query}`, { apiKey: key });

async function upsert(key: string, body: Record<string, unknown>) {
  t.clock.advance(1000);
  const res = await call(t, 'POST', '/contacts/upsert', { key, body });
  expect(res.status).toBeLessThan(300);
  return res.body as { id: string };
}

/** The organization's events of one kind as the feed orders them, newest first. */
const storedNewestFirst = (orgId: string, event: string) =>
  t.sql<{ id: string; payload: Record<string, unknown> }>(
    `select id, payload from outbox_events where organization_id = ? and event = ? order by txid desc, seq desc`,
    [orgId, event],
  );

describe('polling trigger', () => {
  it('returns the latest events of the trigger, newest first, each with its event id first; a restore is a new event id', async () => {
    const org = await t.newOrg();
    const ada = await upsert(org.publicKey, { email: 'ada@example.com', firstName: 'Ada' });
    await upsert(org.publicKey, { email: 'grace@example.com', firstName: 'Grace' });
    await upsert(org.publicKey, { email: 'ada@example.com', lastName: 'Lovelace' });
    const internal = { 'x-api-key': org.internalKey };
    expect((await fetch(`${t.origin}/api/contacts/${ada.id}/delete`, { method: 'POST', headers: internal })).status).toBe(200);
    expect((await fetch(`${t.origin}/api/contacts/${ada.id}/restore`, { method: 'POST', headers: internal })).status).toBe(200);

    const res = await poll(org.internalKey, 'contact.created/poll');
    expect(res.status).toBe(200);
    const stored = await storedNewestFirst(org.orgId, 'contact.created');
    expect(stored).toHaveLength(3);
    expect(res.body).toEqual(stored.map((r) => ({ ...r.payload, id: r.id })));
    for (const item of res.body) expect(Object.keys(item)[0]).toBe('id');
    // The restore's contact.created is about the same contact as the first one, under a new event id.
    const [restored, grace, created] = res.body;
    expect([restored.data.contact.id, grace.data.contact.firstName, created.data.contact.id]).toEqual([ada.id, 'Grace', ada.id]);
    expect(new Set(res.body.map((e: { id: string }) => e.id)).size).toBe(3);

    const updated = await poll(org.internalKey, 'contact.updated/poll');
    expect(updated.body.map((e: { event: string; data: { contact: { lastName: string } } }) => [e.event, e.data.contact.lastName])).toEqual(
      [['contact.updated', 'Lovelace']],
    );
    expect((await poll(org.internalKey, 'contact.created/poll?limit=1')).body).toEqual([restored]);
    // Another organization's poll, and a trigger nothing happened for, are empty.
    expect((await poll((await t.newOrg()).internalKey, 'contact.created/poll')).body).toEqual([]);
    expect((await poll(org.internalKey, 'deal.won/poll')).body).toEqual([]);
  });

  it('pages 25 by default and at most 100; refuses a bad limit, an unknown parameter and a non-trigger; needs an Internal key', async () => {
    const org = await t.newOrg({ plan: 'max' });
    const contacts = Array.from({ length: 30 }, (_, i) => ({ email: `p${i}@example.com`, firstName: `P${i}` }));
    expect((await call(t, 'POST', '/contacts/batch-upsert', { key: org.publicKey, body: { contacts } })).status).toBe(200);
    expect((await poll(org.internalKey, 'contact.created/poll')).body).toHaveLength(25);
    const all = await poll(org.internalKey, 'contact.created/poll?limit=100');
    expect(all.body).toHaveLength(30);
    // One batch is one transaction: its events come newest first by their order within it.
    expect(all.body.map((e: { data: { contact: { firstName: string } } }) => e.data.contact.firstName)).toEqual(
      contacts.map((c) => c.firstName).reverse(),
    );
    for (const [query, path, message] of [
      ['limit=101', 'limit', /limit may be at most 100/],
      ['limit=0', 'limit', /limit must be at least 1/],
      ['limit=ten', 'limit', /limit must be a whole number/],
      ['limit=2.5', 'limit', /limit must be a whole number/],
      ['since=2026-01-01', 'since', /unknown query parameter "since"/],
    ] as const) {
      const res = await poll(org.internalKey, `contact.created/poll?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe('validation_failed');
      expect(res.body.issues[0].path, query).toBe(path);
      expect(res.body.issues[0].message, query).toMatch(message);
    }
    for (const event of ['contact.score_changed', 'ping', 'nope']) {
      expect(await poll(org.internalKey, `${event}/poll`), event).toMatchObject({ status: 404, body: { code: 'not_found' } });
    }
    expect((await automation(t, 'GET', '/triggers/contact.created/poll', { bearer: org.internalKey })).body).toHaveLength(25);
    expect((await automation(t, 'GET', '/triggers/contact.created/poll', { apiKey: org.publicKey })).status).toBe(403);
    expect((await automation(t, 'GET', '/triggers/contact.created/poll', null)).status).toBe(401);
  });

  it("looks only through the organization's newest AUTOMATION_POLL_SCAN_EVENTS events, of any kind", async () => {
    const org = await t.newOrg();
    await upsert(org.publicKey, { email: 'old@example.com', firstName: 'Old' });
    for (const lastName of ['A', 'B', 'C']) await upsert(org.publicKey, { email: 'old@example.com', lastName });
    const actor = { orgId: org.orgId } as InternalActor;
    const read = (scan: number) =>
      pollTrigger(t.runtime.deps.db, { AUTOMATION_POLL_SCAN_EVENTS: scan }, actor, { event: 'contact.created', limit: 100 });
    // The contact.created is the 4th newest event: a window of 4 holds it, one of 3 does not.
    expect((await read(4)).map((e) => e.event)).toEqual(['contact.created']);
    expect(await read(3)).toEqual([]);
    expect(t.runtime.deps.config.AUTOMATION_POLL_SCAN_EVENTS).toBe(10_000);
  });

  it('walks outbox_events_feed_idx backwards and reads at most the window, with the generic plan a server uses', async () => {
    const org = await t.newOrg();
    // 3,000 events of another kind, then nothing of the polled kind: the worst case, a poll that finds nothing.
    await t.sql(
      `insert into outbox_events (organization_id, event, payload) select ?, 'contact.updated', '{"event":"contact.updated"}'::jsonb from generate_series(1, 3000)`,
      [org.orgId],
    );
    const scan = 500;
    const client = await t.runtime.deps.db.pool.connect();
    try {
      await client.query('begin');
      await client.query('set local plan_cache_mode = force_generic_plan');
      await client.query(`prepare recent as ${RECENT_EVENTS.text}`);
      const params = bind(RECENT_EVENTS, { orgId: org.orgId, event: 'contact.created', scan, limit: 100 });
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `explain (analyze, format json) execute recent(${params.map((v) => client.escapeLiteral(String(v))).join(', ')})`,
      );
      const nodes = flatten(rows[0]!['QUERY PLAN'][0].Plan);
      const outbox = nodes.filter((n) => n['Relation Name'] === 'outbox_events');
      expect(outbox.map((n) => [n['Node Type'], n['Index Name'], n['Scan Direction']])).toEqual([
        ['Index Scan', 'outbox_events_feed_idx', 'Backward'],
      ]);
      expect(outbox[0]!['Actual Rows']).toBe(scan);
      expect(nodes.some((n) => n['Node Type'] === 'Sort')).toBe(false);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  'Actual Rows': number;
  Plans?: PlanNode[];
}

const flatten = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)];
