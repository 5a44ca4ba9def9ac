/**
 * Keys the database does not know, whoever sends them (spec "Limits": 600 requests per minute per key, nothing per
 * address): a valid key is never refused for another client's traffic. A flood of unknown keys stays cheap because
 * each server remembers the hashes it did not find (401 from memory, before the body is read) and looks keys it has not
 * seen authenticate up a few at a time.
 */
import { hashKey } from '@leadwire/core';
import { generateKeyValue } from '#core/auth/key-material.ts';
import { keyGuardOf } from '#core/limits/key-guard.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst, freshMinute, intHeader, type PeerServer, startPeer } from '../support/bursts.ts';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { aboutKey, heard } from '../support/key-changes.ts';

const LIMIT = 600;

let t: TestApp;
let server: PeerServer;
/** The same API served by a second server on the same database, with a memory of its own. */
let peer: TestApp;
beforeAll(async () => {
  t = await initTestApp();
  server = await startPeer(t);
  peer = { ...t, origin: server.origin, v1: server.v1, runtime: server.runtime };
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const req = (app: TestApp, method: string, path: string, opts: Parameters<typeof call>[3] = {}) => call(app, method, path, opts);
const search = (app: TestApp, key: string) => req(app, 'GET', '/contacts/search?email=rl@example.com', { key });

function expectRateHeaders(r: Awaited<ReturnType<typeof call>>, remaining: number) {
  expect(intHeader(r, 'x-ratelimit-limit')).toBe(LIMIT);
  expect(intHeader(r, 'x-ratelimit-remaining')).toBe(remaining);
}

/** An org with one contact to look up, so a valid key's search answers 200. */
async function orgWithContact() {
  const org = await t.newOrg();
  const r = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'rl@example.com' } });
  expect(r.status).toBe(200);
  const key = await t.newKey({
    orgId: org.orgId,
    userId: org.userId,
    name: 'burst',
    type: 'public',
    permissions: ['contacts:read', 'contacts:write'],
  });
  return { ...org, key };
}

describe('unknown keys', () => {
  const lookups = (app: 't' | 'peer') => keyGuardOf((app === 't' ? t.runtime : server.runtime).deps).lookups();

  it("never refuses a valid key for other clients' unknown keys, from the same address or after a restart", async () => {
    const org = await orgWithContact();
    freshMinute(t.clock);
    expect((await search(t, org.key)).status).toBe(200);
    const unseen = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'unseen', type: 'public', permissions: ['contacts:read'] });

    // Far more than the 60 a minute that used to lock the address out, all from this one address.
    const looked = await burst(100, 20, () => search(t, generateKeyValue()));
    for (const r of looked) expect([r.status, r.body.code]).toEqual([401, 'unauthorized']);
    for (const app of [t, peer]) {
      const r = await search(app, unseen);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const known = await search(t, org.key);
    expect(known.status).toBe(200);
    expectRateHeaders(known, LIMIT - 2);

    // A process that starts now (a restart) has seen no key: a valid one still goes through.
    const fresh = await startPeer(t);
    try {
      const other = await t.newKey({
        orgId: org.orgId,
        userId: org.userId,
        name: 'after restart',
        type: 'public',
        permissions: ['contacts:read'],
      });
      for (const key of [other, org.key]) {
        const r = await search({ ...t, v1: fresh.v1 }, key);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }
    } finally {
      await fresh.close();
    }
  });

  it('looks each unknown key up once: a repeat is answered 401 from memory, before the body is read', async () => {
    freshMinute(t.clock);
    const flood = Array.from({ length: 100 }, () => generateKeyValue());
    const before = lookups('t').passed;
    for (const r of await burst(flood.length, 20, (i) => search(t, flood[i]!))) expect(r.status).toBe(401);
    expect(lookups('t').passed - before).toBe(flood.length);
    const repeated = await burst(flood.length * 2, 20, (i) => search(t, flood[i % flood.length]!));
    for (const r of repeated) expect([r.status, r.body.code]).toEqual([401, 'unauthorized']);
    // Answered from memory: a broken body gets the same 401, not the 400 a look-up would lead to.
    const broken = await req(t, 'POST', '/contacts/upsert', { key: flood[0], body: '{"email":' });
    expect([broken.status, broken.body.code]).toEqual([401, 'unauthorized']);
    expect(lookups('t').passed - before).toBe(flood.length);
    console.info(`unknown keys: ${flood.length} look-ups for ${flood.length * 3 + 1} requests of ${flood.length} distinct keys`);
  });

  it('looks unseen keys up a few at a time, and lets a real key through in the middle of a flood', async () => {
    const org = await orgWithContact();
    freshMinute(t.clock);
    const limit = t.runtime.deps.config.KEY_LOOKUP_CONCURRENCY;
    const keys = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        t.newKey({ orgId: org.orgId, userId: org.userId, name: `mid-flood ${i}`, type: 'public', permissions: ['contacts:read'] }),
      ),
    );
    const flood = burst(200, 40, () => search(peer, generateKeyValue()));
    const real = await Promise.all(keys.map((key) => search(peer, key)));
    const refused = await flood;
    for (const r of real) expect(r.status, JSON.stringify(r.body)).toBe(200);
    for (const r of refused) expect(r.status).toBe(401);
    expect(lookups('peer').peakInFlight).toBeLessThanOrEqual(limit);
    expect(lookups('peer').waiting).toBe(0);
  });

  it('lets a key in at once when it is created after its hash was remembered as unknown', async () => {
    const org = await orgWithContact();
    freshMinute(t.clock);
    const value = generateKeyValue();
    for (const app of [t, peer, t, peer]) expect((await search(app, value)).status).toBe(401);
    const told = Promise.all([t.runtime, server.runtime].map((r) => heard(r, aboutKey(value, 'INSERT'))));
    await t.sql(
      `insert into api_keys (organization_id, created_by_id, name, type, permissions, key_hash, display_prefix, owner_epoch)
       select organization_id, created_by_id, 'late', type, permissions, ?, 'ck_live_late', owner_epoch from api_keys where key_hash = ?`,
      [hashKey(value), hashKey(org.key)],
    );
    await told;
    for (const app of [t, peer]) expect((await search(app, value)).status).toBe(200);
  });

  it('does not count malformed or missing keys, which never reach the database', async () => {
    const org = await orgWithContact();
    freshMinute(t.clock);
    const refused = await burst(100, 10, (i) =>
      req(t, 'GET', '/contacts/search?email=rl@example.com', i % 2 ? { key: 'ck_live_short' } : {}),
    );
    for (const r of refused) expect([r.status, r.body.code]).toEqual([401, 'unauthorized']);
    const unseen = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'unseen', type: 'public', permissions: ['contacts:read'] });
    expect((await search(t, unseen)).status).toBe(200);
  });
});
