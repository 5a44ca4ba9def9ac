/**
 * Issue 29 beside issue 27's one-trip writes (a /v1 contact, lead or company upsert done by one PL/pgSQL call, served
 * by apps/server's direct-routes.ts, not trpc-to-openapi): the overview still tallies each of them by key and outcome,
 * and an endpoint subscribed to every event (`*`) receives the events the function writes in SQL.
 */
import { hashKey } from '@leadwire/core';
import { dispatchEvents } from '#core/webhooks/delivery/dispatch.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { internalClient } from '../support/internal.ts';
import { aboutKey, heard } from '../support/key-changes.ts';
import { PUBLIC_V4, testDns } from '../webhooks/endpoints/support.ts';

let t: TestApp;
beforeAll(async () => {
  // No webhook engine: the round trips counted are the requests' own. The clock stands still, so the request tally's
  // timed flush (every 10 s of the app's clock) cannot land inside a measured request either; the overview flushes
  // before it reads.
  t = await initTestApp({}, { resolver: testDns({ 'hooks.example.com': [PUBLIC_V4] }).resolver });
  t.clock.freeze(t.clock.now());
});
afterAll(async () => {
  t?.clock.unfreeze();
  await t?.close();
});

/** A Public API key with every write permission, once the server has heard of it (its look-up is then remembered). */
async function writeKey(org: Awaited<ReturnType<TestApp['newOrg']>>): Promise<string> {
  const key = await t.newKey({
    orgId: org.orgId,
    userId: org.userId,
    name: 'One trip',
    type: 'public',
    permissions: ['contacts:write', 'leads:write', 'companies:write'],
  });
  const told = heard(t.runtime, aboutKey(key));
  await t.sql('update api_keys set expires_at = expires_at where key_hash = ?', [hashKey(key)]);
  await told;
  return key;
}

const traffic = () => ({ ...t.runtime.deps.db.traffic });

/** Sends a /v1 write and checks it was the one-trip path: a single round trip to the database, no transaction begun. */
async function oneTrip(key: string, path: string, body: unknown): Promise<number> {
  const before = traffic();
  const r = await call(t, 'POST', path, { key, body });
  const after = traffic();
  if (r.status === 200) {
    expect({ roundTrips: after.roundTrips - before.roundTrips, transactions: after.transactions - before.transactions }).toEqual({
      roundTrips: 1,
      transactions: 0,
    });
  }
  return r.status;
}

describe('the one-trip writes', () => {
  it('are tallied per key and outcome: successes, refused input, a spent window (in SQL, then from memory)', async () => {
    const org = await t.newOrg({ plan: 'max' });
    const key = await writeKey(org);
    // The key's first request looks it up by hash; the process then knows it.
    expect((await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'first@one-trip.example' } })).status).toBe(200);
    expect(await oneTrip(key, '/contacts/upsert', { email: 'ada@one-trip.example', firstName: 'Ada' })).toBe(200);
    expect(await oneTrip(key, '/leads', { email: 'lead@one-trip.example', score: 40 })).toBe(200);
    expect(await oneTrip(key, '/companies/upsert', { domain: 'one-trip.example', name: 'One Trip' })).toBe(200);
    expect(await oneTrip(key, '/contacts/upsert', { firstName: 'no email' })).toBe(400);
    // The key's window full: the function refuses the write (429), and the guard answers the next one from memory.
    const now = t.clock.now().getTime();
    await t.sql(
      `update rate_limit_counters set count = 600 where bucket = 'key:' || (select id from api_keys where key_hash = ?) and window_start = ?`,
      [hashKey(key), new Date(now - (now % 60_000))],
    );
    expect(await oneTrip(key, '/contacts/upsert', { email: 'late@one-trip.example' })).toBe(429);
    expect(await oneTrip(key, '/contacts/upsert', { email: 'later@one-trip.example' })).toBe(429);

    const [row] = await t.sql<{ id: string }>(`select id from api_keys where key_hash = ?`, [hashKey(key)]);
    const view = await internalClient(t, org.internalKey).activity.overview.query({ period: '24h' });
    const lines = view.api.filter((l) => l.subject === row!.id);
    expect(Object.fromEntries(lines.map((l) => [l.outcome, l.total]))).toEqual({ '2xx': 4, '4xx': 1, '429': 2 });
  });
});

describe('an endpoint subscribed to every event', () => {
  it('is targeted by the events the one-trip function writes in SQL (the outbox trigger, then the dispatch)', async () => {
    const org = await t.newOrg({ plan: 'max' });
    const key = await writeKey(org);
    // The engine is not started: the test dispatches and reads the deliveries it creates (nothing is sent).
    const endpoint = await internalClient(t, org.internalKey).webhooks.create.mutate({
      url: 'https://hooks.example.com/every',
      events: ['*'],
    });
    expect(endpoint.events).toEqual(['*']);
    expect((await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'warm@every.example' } })).status).toBe(200);
    // Created, then updated with a tag gained: contact.updated and contact.tag_added, both written by the function.
    expect(await oneTrip(key, '/contacts/upsert', { email: 'grace@every.example', firstName: 'Grace' })).toBe(200);
    expect(await oneTrip(key, '/contacts/upsert', { email: 'grace@every.example', tags: ['vip'] })).toBe(200);
    while ((await dispatchEvents(t.runtime.deps.db, t.clock.now())) > 0);
    const rows = await t.sql<{ event: string; body: string }>(`select event, body from webhook_deliveries where endpoint_id = ?`, [
      endpoint.id,
    ]);
    const grace = rows
      .filter((r) => (JSON.parse(r.body) as { data: { contact: { email: string } } }).data.contact.email === 'grace@every.example')
      .map((r) => r.event)
      .sort();
    expect(grace).toEqual(['contact.created', 'contact.tag_added', 'contact.updated']);
  });
});
