/**
 * Spec "Authentication" 7-8: revoking a key takes effect on the next request, and a revoked key, or one whose owner was
 * deactivated or changed password, gets 401 `unauthorized`. Here across two real server processes on one database,
 * each of which has the key's spent window in memory (a 429 it would otherwise repeat until the minute ends): the
 * change is made through process A, and process B must answer 401 as soon as it has heard it.
 */
import { randomBytes } from 'node:crypto';
import { hashKey } from '@leadwire/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { killLeftovers, type ServerProcess, sleep, startServer, sendWithKey } from '../support/process.ts';

const LIMIT = 600;
const PASSWORD = 'correct horse battery staple';
/** Bounds the wait for a process to hear the change; it normally has by the very next request. */
const HEAR_WITHIN_MS = 5_000;

let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  t = await initTestApp();
  const env = { DATABASE_URL: t.runtime.deps.config.DATABASE_URL!, ROLE: 'api', PASSWORD_HASH_COST: '12', LOG_LEVEL: 'warn' };
  [a, b] = await Promise.all([startServer(env), startServer(env)]);
  await Promise.all([a.waitReady(), b.waitReady()]);
}, 180_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await killLeftovers();
  await t?.close();
});

const search = (origin: string, key: string) => sendWithKey(origin, 'GET', '/v1/contacts/search?email=nobody@example.com', key);

/** The key's count in the database's current minute (the processes run on the system clock, as PostgreSQL does). */
async function counted(key: string): Promise<number> {
  const rows = await t.sql<{ count: number }>(
    `select coalesce(sum(c.count), 0)::int as count from rate_limit_counters c join api_keys k on c.bucket = 'key:' || k.id
     where k.key_hash = ? and c.window_start = date_trunc('minute', now())`,
    [hashKey(key)],
  );
  return Number(rows[0]?.count ?? 0);
}

/** Spends the key in this minute and the next two, so no minute boundary can end the refusal during the test. */
async function spend(key: string) {
  await t.sql(
    `insert into rate_limit_counters (bucket, window_start, count)
     select 'key:' || k.id, date_trunc('minute', now()) + m * interval '1 minute', ? from api_keys k, generate_series(0, 2) m where k.key_hash = ?`,
    [LIMIT, hashKey(key)],
  );
}

/**
 * Asks until the process answers a request without counting it: the refusal then comes from its memory. A change heard
 * while a look-up runs keeps the process from remembering that look-up (the key's own creation, announced late, can do
 * that), hence a few tries.
 */
async function refusedFromMemory(origin: string, key: string) {
  for (let i = 0; i < 10; i++) {
    const before = await counted(key);
    const r = await search(origin, key);
    expect([r.status, r.body.code]).toEqual([429, 'rate_limited']);
    if ((await counted(key)) === before) return;
  }
  throw new Error(`${origin} never refused the key from memory`);
}

/** Asks until the answer is 401: every answer before it must be the 429 from memory. Returns how many 429s came. */
async function untilUnauthorized(origin: string, key: string): Promise<number> {
  const deadline = Date.now() + HEAR_WITHIN_MS;
  let stale = 0;
  for (;;) {
    const r = await search(origin, key);
    if (r.status === 401) {
      expect(r.body).toEqual({ error: expect.any(String), code: 'unauthorized', requestId: expect.any(String) });
      return stale;
    }
    expect([r.status, r.body.code]).toEqual([429, 'rate_limited']);
    stale++;
    if (Date.now() > deadline) throw new Error(`${origin} still answered 429 ${HEAR_WITHIN_MS} ms after the change`);
    await sleep(5);
  }
}

async function member(orgId: string) {
  const [row] = await t.sql<{ id: string }>(
    `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', 'member') returning id`,
    [orgId, `member-${randomBytes(4).toString('hex')}@example.com`],
  );
  return row!.id;
}

type Org = Awaited<ReturnType<TestApp['newOrg']>>;

/** Each change is made through process A, as the product makes it; `userId` is the owner of the key it must stop. */
const changes: Record<string, (org: Org) => Promise<{ userId: string; check: () => Promise<{ status: number; body: any }> }>> = {
  'key revoked': async (org) => {
    const [key] = await t.sql<{ id: string }>(`select id from api_keys where key_hash = ?`, [hashKey(org.publicKey)]);
    return { userId: org.userId, check: () => sendWithKey(a.origin, 'POST', `/api-keys/${key!.id}/revoke`, org.internalKey) };
  },
  'owner deactivated': async (org) => {
    const userId = await member(org.orgId);
    return { userId, check: () => sendWithKey(a.origin, 'POST', `/accounts/members/${userId}/deactivate`, org.internalKey) };
  },
  'password changed': async (org) => ({
    userId: org.userId,
    check: () =>
      sendWithKey(a.origin, 'POST', '/accounts/change-password', org.internalKey, {
        currentPassword: PASSWORD,
        newPassword: 'a brand new passphrase 42',
      }),
  }),
  'password reset': async (org) => {
    const token = `lwr_${randomBytes(24).toString('hex')}`;
    await t.sql(
      `insert into password_reset_tokens (user_id, token_hash, created_at, expires_at) values (?, ?, now(), now() + interval '1 hour')`,
      [org.userId, hashKey(token)],
    );
    return {
      userId: org.userId,
      check: async () => {
        const res = await fetch(`${a.origin}/api/accounts/password-reset/complete`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token, newPassword: 'a brand new passphrase 42' }),
        });
        return { status: res.status, body: await res.json() };
      },
    };
  },
  'logged out everywhere': async (org) => ({
    userId: org.userId,
    check: () => sendWithKey(a.origin, 'POST', '/accounts/log-out-all', org.internalKey),
  }),
};

describe('a spent key stops in every process once revoked, or once its owner is deactivated or changes password', {
  timeout: 180_000,
}, () => {
  for (const [label, prepare] of Object.entries(changes)) {
    it(`${label}: process B answers 401 unauthorized, not 429`, async () => {
      const org = await t.newOrg();
      const { userId, check } = await prepare(org);
      const key =
        userId === org.userId
          ? org.publicKey
          : await t.newKey({ orgId: org.orgId, userId, name: 'member key', type: 'public', permissions: ['contacts:read'] });
      await spend(key);
      await refusedFromMemory(a.origin, key);
      await refusedFromMemory(b.origin, key);

      const done = await check();
      expect(done.status, JSON.stringify(done.body)).toBeLessThan(300);
      const stale = await untilUnauthorized(b.origin, key);
      await untilUnauthorized(a.origin, key);
      console.info(`${label}: process B answered ${stale} stale 429(s) before its 401`);
    });
  }
});
