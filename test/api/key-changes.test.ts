/**
 * Each serving process hears every key change on its LISTEN connection (the process's one, shared with the webhook
 * pump's wake-ups), and answers refusals from memory only while it does: a change it may have missed (the connection was lost) must never leave a revoked key refused
 * with 429 instead of 401.
 */
import { once } from 'node:events';
import { hashKey } from '@leadwire/core';
import { generateKeyValue } from '#core/auth/key-material.ts';
import { keyGuardOf } from '#core/limits/key-guard.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../apps/server/src/compose.ts';
import { call, initTestApp, serve, type TestApp } from '../support/app.ts';
import { freshMinute, windowStart } from '../support/bursts.ts';
import { aboutKey, aboutUser, heard, listenerState } from '../support/key-changes.ts';

const LIMIT = 600;

/** Held down once lost: the retry is far beyond any test. */
let t: TestApp;
/** A second server on the same database that listens again 10 ms after a loss. */
let quick: { runtime: Runtime; app: TestApp['app']; origin: string };
let quickApp: TestApp;

beforeAll(async () => {
  t = await initTestApp({ KEY_CHANGES_RETRY_MS: '600000' });
  quick = await serve({ ...t.runtime.deps.config, KEY_CHANGES_RETRY_MS: 10 }, { clock: t.clock, migrate: false });
  quickApp = { ...t, origin: quick.origin, v1: `${quick.origin}/api/v1`, runtime: quick.runtime };
});
afterAll(async () => {
  await quick?.app.close();
  await quick?.runtime.close();
  await t?.close();
});

const search = (app: TestApp, key: string) => call(app, 'GET', '/contacts/search?email=kc@example.com', { key });

async function spentKey(app: TestApp) {
  const org = await t.newOrg();
  const key = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'kc', type: 'public', permissions: ['contacts:read'] });
  // Heard before it is spent: a change heard during a look-up of the key would keep the server from remembering it.
  const told = heard(app.runtime, aboutKey(key));
  await t.sql(`update api_keys set expires_at = null where key_hash = ?`, [hashKey(key)]);
  await told;
  freshMinute(t.clock);
  await t.sql(`insert into rate_limit_counters (bucket, window_start, count) select 'key:' || id, ?, ? from api_keys where key_hash = ?`, [
    windowStart(t.clock, 'minute'),
    LIMIT,
    hashKey(key),
  ]);
  return { ...org, key };
}

async function counted(key: string): Promise<number> {
  const rows = await t.sql<{ count: number }>(
    `select c.count from rate_limit_counters c join api_keys k on c.bucket = 'key:' || k.id where k.key_hash = ? and c.window_start = ?`,
    [hashKey(key), windowStart(t.clock, 'minute')],
  );
  return Number(rows[0]?.count ?? 0);
}

/** Revokes the key without announcing it: what a process misses while its connection is down. */
async function revokeUnheard(key: string) {
  await t.sql(`alter table api_keys disable trigger api_keys_changed`);
  try {
    await t.sql(`update api_keys set revoked_at = ? where key_hash = ?`, [t.clock.now(), hashKey(key)]);
  } finally {
    await t.sql(`alter table api_keys enable trigger api_keys_changed`);
  }
}

const endListener = async (runtime: Runtime) => {
  const pid = runtime.keyChanges?.backendPid;
  expect(pid).toBeTypeOf('number');
  await t.sql(`select pg_terminate_backend(?)`, [pid]);
};

describe('the key-change connection', () => {
  it("is the process's one LISTEN connection of its own, shared with the pump's wake-ups, in every serving process", async () => {
    const rows = await t.sql<{ pid: number }>(
      `select pid from pg_stat_activity where application_name = 'leadwire-notifications' and datname = current_database()`,
    );
    expect([t.runtime.pumpWake?.backendPid, quick.runtime.pumpWake?.backendPid]).toEqual([
      t.runtime.keyChanges?.backendPid,
      quick.runtime.keyChanges?.backendPid,
    ]);
    expect(rows.map((r) => r.pid).sort()).toEqual([t.runtime.keyChanges?.backendPid, quick.runtime.keyChanges?.backendPid].sort());
    expect([t.runtime.keyChanges?.listening, quick.runtime.keyChanges?.listening]).toEqual([true, true]);
  });

  it('while it is down, nothing is answered from memory: every key is judged by the database', async () => {
    const org = await spentKey(t);
    const unknown = generateKeyValue();
    for (const key of [org.key, org.key]) expect((await search(t, key)).status).toBe(429);
    for (const key of [unknown, unknown]) expect((await search(t, key)).status).toBe(401);
    expect(await counted(org.key)).toBe(LIMIT + 1);
    // A revocation this process does not hear about: memory alone would keep answering 429.
    await revokeUnheard(org.key);
    expect((await search(t, org.key)).status).toBe(429);

    const guard = keyGuardOf(t.runtime.deps);
    const down = listenerState(t.runtime, false);
    await endListener(t.runtime);
    await down;
    expect(guard.isLive).toBe(false);
    const before = guard.lookups().passed;
    const r = await search(t, org.key);
    expect([r.status, r.body.code]).toEqual([401, 'unauthorized']);
    expect((await search(t, unknown)).status).toBe(401);
    // The unknown key was looked up again (the revoked one too, or it could not have had its 401; having authenticated
    // before, it skipped the gate).
    expect(guard.lookups().passed - before).toBe(1);
    // Valid keys keep working, counted as usual.
    const live = await t.newKey({
      orgId: org.orgId,
      userId: org.userId,
      name: 'while down',
      type: 'public',
      permissions: ['contacts:read'],
    });
    const ok = await search(t, live);
    expect([ok.status, ok.headers.get('x-ratelimit-remaining')]).toEqual([404, String(LIMIT - 1)]);
  });

  it('is opened again after a loss, and what was remembered before is forgotten (changes were missed)', async () => {
    const org = await spentKey(quickApp);
    for (let i = 0; i < 3; i++) expect((await search(quickApp, org.key)).status).toBe(429);
    expect(await counted(org.key)).toBe(LIMIT + 1);
    await revokeUnheard(org.key);
    expect((await search(quickApp, org.key)).status).toBe(429);

    const listener = quick.runtime.keyChanges!;
    const pid = listener.backendPid;
    const back = once(listener, 'up');
    await endListener(quick.runtime);
    await back;
    expect(listener.backendPid).not.toBe(pid);
    expect(keyGuardOf(quick.runtime.deps).isLive).toBe(true);
    const r = await search(quickApp, org.key);
    expect([r.status, r.body.code]).toEqual([401, 'unauthorized']);
    // And it hears changes again.
    const other = await spentKey(quickApp);
    for (let i = 0; i < 2; i++) expect((await search(quickApp, other.key)).status).toBe(429);
    const told = heard(quick.runtime, aboutKey(other.key));
    await t.sql(`update api_keys set revoked_at = ? where key_hash = ?`, [t.clock.now(), hashKey(other.key)]);
    await told;
    expect((await search(quickApp, other.key)).status).toBe(401);
  });

  it("forgets every refusal on an announcement it cannot read (an operator's hand-made NOTIFY)", async () => {
    const org = await spentKey(quickApp);
    for (let i = 0; i < 2; i++) expect((await search(quickApp, org.key)).status).toBe(429);
    for (const payload of ['not json', '{"k": 42}', '[]', '{}']) {
      const got = once(quick.runtime.keyChanges!, 'message');
      await t.sql(`select pg_notify('leadwire_keys', ?)`, [payload]);
      await got;
      expect(keyGuardOf(quick.runtime.deps).sizes().spentKeys, payload).toBe(0);
      expect((await search(quickApp, org.key)).status).toBe(429);
    }
    // Each request after a forgotten refusal went to the database (and was counted there).
    expect(await counted(org.key)).toBe(LIMIT + 5);
  });

  it('lets a key whose owner is reactivated in again, though it was remembered as not found', async () => {
    const org = await t.newOrg();
    const key = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'revived', type: 'public', permissions: ['contacts:read'] });
    const off = heard(quick.runtime, aboutUser(org.userId));
    // A raw deactivation that does not move the epoch: the only way a key can come back.
    await t.sql(`update users set active = false where id = ?`, [org.userId]);
    await off;
    for (let i = 0; i < 2; i++) expect((await search(quickApp, key)).status).toBe(401);
    const body = await call(quickApp, 'POST', '/contacts/upsert', { key, body: '{"email":' });
    expect(body.status).toBe(401);
    const on = heard(quick.runtime, aboutUser(org.userId));
    await t.sql(`update users set active = true where id = ?`, [org.userId]);
    await on;
    expect((await search(quickApp, key)).status).toBe(404);
  });

  it('is opened again once the pause has passed on the server clock, which tests move instead of waiting ten minutes', async () => {
    const listener = t.runtime.keyChanges!;
    if (listener.listening) {
      const down = listenerState(t.runtime, false);
      await endListener(t.runtime);
      await down;
    }
    // The pump's wake-ups share the connection: down with it, and back on the same server-clock pause.
    expect(t.runtime.pumpWake?.listening).toBe(false);
    t.clock.advance(600_000);
    await listenerState(t.runtime, true, 5_000);
    expect(keyGuardOf(t.runtime.deps).isLive).toBe(true);
    expect(t.runtime.pumpWake?.listening).toBe(true);
  });
});
