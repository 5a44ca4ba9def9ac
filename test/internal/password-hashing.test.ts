import { addressLimit } from '#core/accounts/address-limits.ts';
import { HashSlots } from '#core/accounts/hash-slots.ts';
import { acceptInvite } from '#core/accounts/invites.ts';
import { changePassword, resetPassword } from '#core/accounts/password.service.ts';
import { hashPassword, passwordHashSlots, setPasswordHashCost, setPasswordHashSlots } from '#core/accounts/passwords.ts';
import { bootstrap } from '#core/accounts/service.ts';
import { type Client, signIn, signUp } from '#core/accounts/sign-in.ts';
import { findSession } from '#core/auth/sessions.ts';
import { halfTheCores } from '#core/config.ts';
import { systemClock } from '#core/clock.ts';
import { PgDb } from '@leadwire/db';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { databaseUrl } from '../support/pg-admin.ts';

/**
 * Issue 16: during a sign-up flood, requests that needed a new database connection waited seconds. The cause was
 * libuv's threadpool (4 threads): scrypt ran there, and so does pg's SCRAM handshake for a new connection (PBKDF2,
 * HMACs and digests through WebCrypto). Hashes queued ahead of the handshake's first step made it wait for them, FIFO.
 * Issue 28 moved hashing to threads of its own (accounts/hash-workers.ts), so the threadpool is the handshake's.
 * The counts below are orderings, not timings: how many of 8 hashes had finished when a new connection was ready.
 */
const HASHES = 8;
const LIMITS = { queue: 64, maxWaitMs: 60_000 };

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('hashing', { migrated: true });
  // 16 MB and milliseconds per hash: long enough to order against a handshake, cheap enough for a test.
  setPasswordHashCost(14);
});
afterAll(async () => {
  setPasswordHashCost(17);
  setPasswordHashSlots({ concurrency: halfTheCores(), queue: 16, maxWaitMs: 5_000 });
  await db?.drop();
});

/** Starts 8 hashes, then opens a new connection (SCRAM): how many hashes had finished once it was ready. */
async function hashesDoneWhenConnected(): Promise<number> {
  let done = 0;
  const hashes = Array.from({ length: HASHES }, () => hashPassword('correct horse battery staple').then(() => done++));
  // A login that authenticates with SCRAM (the run's other sessions are trusted: global-setup.ts).
  const client = new pg.Client(databaseUrl(inject('pgScramUrl'), db.name));
  try {
    await client.connect();
    const finished = done;
    // What this measures is the handshake: the session must have had one (system_user is null for a trusted one).
    expect((await client.query<{ auth: string | null }>('select system_user as auth')).rows[0]?.auth).toMatch(/^scram-sha-256:/);
    return finished;
  } finally {
    await client.end();
    await Promise.all(hashes);
  }
}

describe('password hashing leaves the threadpool to new database connections', () => {
  it('even with more hashes at once than libuv has threads, a new connection is ready while most are still to do', async () => {
    setPasswordHashSlots({ concurrency: HASHES, ...LIMITS });
    // On libuv's pool (before issue 28) 4 hashes ran and 4 waited ahead of the handshake: at least 5 were done first.
    expect(await hashesDoneWhenConnected()).toBeLessThan(HASHES / 2);
  });
});

describe('hash slots', () => {
  it('run in order of arrival, and refuse with 503 and retry-after once the queue is full', async () => {
    const slots = new HashSlots({ concurrency: 1, queue: 2, maxWaitMs: 60_000 });
    const order: number[] = [];
    const release = await slots.acquire();
    const queued = [1, 2].map((n) => slots.run(async () => order.push(n)));
    expect(slots.usage).toEqual({ running: 1, waiting: 2 });
    const refused = await slots.run(async () => order.push(3)).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 503, code: 'service_unavailable', headers: { 'retry-after': '2' } });
    release();
    await Promise.all(queued);
    expect(order).toEqual([1, 2]);
    expect(slots.usage).toEqual({ running: 0, waiting: 0 });
  });

  it('refuse a caller that waited longer than the maximum, and give its place to the next', async () => {
    // A 1 ms wait is a socket-level style time-out: configured small rather than waited out.
    const slots = new HashSlots({ concurrency: 1, queue: 4, maxWaitMs: 1 });
    const release = await slots.acquire();
    const waited = await slots.run(async () => 'ran').catch((e: unknown) => e);
    expect(waited).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(slots.usage).toEqual({ running: 1, waiting: 0 });
    release();
    expect(await slots.run(async () => 'ran')).toBe('ran');
  });

  it('a failing hash gives its slot back', async () => {
    const slots = new HashSlots({ concurrency: 1, queue: 0, maxWaitMs: 60_000 });
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(async () => 'ran')).toBe('ran');
  });
});

describe('a full hashing queue', () => {
  it('refuses a sign-in with 503 before the throttle writes its attempt (issue 28)', async () => {
    setPasswordHashSlots({ concurrency: 1, queue: 0, maxWaitMs: 60_000 });
    const sql = new PgDb(new pg.Pool({ connectionString: db.url, max: 1 }));
    const email = `full-${Date.now()}@example.com`;
    const release = await passwordHashSlots().acquire();
    try {
      const refused = await signIn(
        sql,
        { email, password: 'x'.repeat(12) },
        { ip: '10.2.2.2', now: new Date(), wait: async () => {} },
      ).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect((await sql.raw('select count(*)::int as n from sign_in_attempts where email = $1', [email])).rows).toEqual([{ n: 0 }]);
    } finally {
      release();
      await sql.pool.end();
    }
  });
});

describe('no database connection is held while a password is hashed or waits for a slot', () => {
  const PASSWORD = 'correct horse battery staple';
  const client = (): Client => ({ ip: '10.1.1.1', now: new Date(), wait: (ms) => systemClock.sleep(ms) });

  it('on every path that hashes: sign-up, sign-in, password change, reset, invitation, bootstrap', async () => {
    setPasswordHashSlots({ concurrency: 1, queue: 8, maxWaitMs: 60_000 });
    // One connection in all: a path that held it while waiting would leave none for anyone.
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    const sql = new PgDb(pool);
    try {
      const email = `owner-${Date.now()}@example.com`;
      const session = await signUp(sql, { organizationName: 'Org', email, password: PASSWORD }, client(), addressLimit(sql, 100));
      const actor = (await findSession(sql, session.token, new Date()))!;
      const paths: Record<string, () => Promise<unknown>> = {
        signUp: () => signUp(sql, { organizationName: 'Org', email: `x${email}`, password: PASSWORD }, client(), addressLimit(sql, 100)),
        signIn: () => signIn(sql, { email, password: PASSWORD }, client()),
        changePassword: () => changePassword(sql, actor, { currentPassword: PASSWORD, newPassword: PASSWORD }, client()),
        resetPassword: () => resetPassword(sql, { token: 'lwr_unknown', newPassword: PASSWORD }, client()).catch((e: unknown) => e),
        acceptInvite: () => acceptInvite(sql, { token: 'lwi_unknown', password: PASSWORD }, client()).catch((e: unknown) => e),
        bootstrap: () => bootstrap(sql, { name: 'Boot', ownerEmail: `boot-${email}`, ownerPassword: PASSWORD }),
      };
      const slots = passwordHashSlots();
      for (const [name, start] of Object.entries(paths)) {
        const release = await slots.acquire();
        const done = start();
        try {
          await vi.waitFor(() => expect(slots.usage.waiting, name).toBe(1));
          expect({ name, checkedOut: pool.totalCount - pool.idleCount }).toEqual({ name, checkedOut: 0 });
          expect((await sql.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
        } finally {
          release();
        }
        await done;
      }
    } finally {
      await pool.end();
    }
  });
});
