/**
 * A stalled PostgreSQL never hangs a request (issue 16): a write that cannot finish within its budget is rolled back
 * and answered 500 save_failed, a read 503 service_unavailable with retry-after, a request that gets no connection at
 * all 503; the idempotency record follows the write, so a retry with the same key runs it once. The stalls are real:
 * locks the test holds, and backends (or the whole cluster) frozen with SIGSTOP. The server runs on a cluster of its
 * own, with its time-outs set to a few hundred milliseconds.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '#db/embedded.ts';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { settingUp } from '../support/db.ts';
import { childrenOf, signal, statFields } from '../support/procfs.ts';
import { scratchDir } from '../support/scratch.ts';
import { fromPristine } from '../support/pristine-cluster.ts';

/** Every answer of a stalled request comes within this: the largest time-out below plus room for a busy machine. */
const BOUND_MS = 2_000;
const LIMITS = {
  DB_POOL_MAX: '2',
  DB_ACQUIRE_TIMEOUT_MS: '300',
  DB_STATEMENT_TIMEOUT_MS: '400',
  DB_LOCK_TIMEOUT_MS: '250',
  DB_QUERY_TIMEOUT_MS: '500',
  DB_TRANSACTION_TIMEOUT_MS: '900',
};

let root: string;
let cluster: EmbeddedPostgresHandle;
let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let admin: pg.Client;
const frozen = new Set<number>();

beforeAll(async () => {
  root = await scratchDir('stall');
  cluster = await startEmbeddedPostgres({ dataDir: await fromPristine(path.join(root, 'data')) });
  t = await initTestApp({ DATABASE_URL: cluster.url, ...LIMITS });
  org = await t.newOrg();
  admin = new pg.Client({ connectionString: cluster.url });
  admin.on('error', () => {});
  await admin.connect();
});
/**
 * The pool's two backends as each test starts. Each test starts from the pool's two connections open and idle, so that
 * what it asks of the pool is what it is about and not a new connection's set-up, which on a loaded host can outlast
 * this file's 300 ms wait for one.
 */
let backends: number[] = [];
beforeEach(async () => {
  backends = await warmPool();
});
afterEach(() => thaw());
afterAll(async () => {
  thaw();
  await admin?.end().catch(() => {});
  await t?.close().catch(() => {});
  await cluster?.stop();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

function freeze(pids: number[]): void {
  for (const pid of pids) {
    process.kill(pid, 'SIGSTOP');
    frozen.add(pid);
  }
}
/** Lets every frozen process run again; one that ended meanwhile must not keep the others stopped. */
function thaw(): void {
  for (const pid of frozen) signal(pid, 'SIGCONT');
  frozen.clear();
}

const email = (label: string) => `${label}-${randomUUID().slice(0, 8)}@stall.example`;
const upsert = (body: unknown, key?: string) =>
  call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body, headers: key ? { 'idempotency-key': key } : {} });

/**
 * A request that must succeed, sent again on 503 as a client's retry (the SDK's) sends it: after a stall the pool sets
 * up new connections, and on a loaded host one can outlast this file's 300 ms wait for it, which is a 503 by design.
 */
async function retrying<T extends { status: number }>(send: () => Promise<T>): Promise<T> {
  let answer = await send();
  for (let i = 0; answer.status === 503 && i < 10; i++) {
    await new Promise((r) => setTimeout(r, 500));
    answer = await send();
  }
  return answer;
}
const contact = async (address: string) =>
  (await admin.query<{ first_name: string | null }>('select first_name from contacts where email = $1', [address])).rows;
const records = async (key: string) => (await admin.query('select status from idempotency_records where key = $1', [key])).rows;

async function timed<T>(work: Promise<T>): Promise<T & { ms: number }> {
  const started = performance.now();
  const r = await work;
  return { ...r, ms: performance.now() - started };
}

/** A transaction of the test's own, holding whatever locks `sql` takes until `release`. */
async function hold(sql: string, params: unknown[] = []): Promise<{ release(): Promise<void> }> {
  const c = new pg.Client({ connectionString: cluster.url });
  await c.connect();
  await c.query('begin');
  await c.query(sql, params);
  return { release: async () => void (await c.query('rollback'), await c.end()) };
}

/** The request pool's backends, as PostgreSQL lists them. */
async function poolBackends(): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(`select pid from pg_stat_activity where application_name = 'leadwire-requests'`);
  return rows.map((r) => r.pid);
}

/**
 * Waits for backends to be gone (each notices its client left once it runs again): an event, never a pause. One still
 * there after 10 s is reported with what PostgreSQL says it is doing, and whether it is still stopped.
 */
async function gone(pids: number[]): Promise<void> {
  for (const deadline = Date.now() + 10_000; ; ) {
    const { rows } = await admin.query(
      `select pid, state, wait_event_type, wait_event, left(query, 120) as query, now() - state_change as since
         from pg_stat_activity where pid = any($1::int[])`,
      [pids],
    );
    if (rows.length === 0) return;
    if (Date.now() > deadline) {
      const states = rows.map((r: { pid: number }) => statFields(r.pid)?.[0] ?? 'gone from /proc');
      throw new Error(`backends ${pids.join(', ')} still there: ${JSON.stringify(rows.map((r, i) => ({ ...r, process: states[i] })))}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Makes the request pool hold exactly its two connections, idle: two transactions at once, tried again if a connection
 * was not set up within the 300 ms wait (a loaded host).
 */
async function warmPool(): Promise<number[]> {
  await settingUp(() => Promise.all([0, 1].map(() => t.runtime.deps.db.transaction((tx) => tx.raw('select pg_sleep(0.05) as slept')))));
  const pids = await poolBackends();
  expect(pids).toHaveLength(2);
  return pids;
}

const saveFailed = (message: string) => ({ error: message, code: 'save_failed' });

function expectUnavailable(r: { status: number; body: unknown; headers: Headers; ms: number }): void {
  expect(r.status, JSON.stringify(r.body)).toBe(503);
  expect(r.body).toEqual({ error: expect.any(String), code: 'service_unavailable' });
  expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(r.ms).toBeLessThan(BOUND_MS);
}

describe('a lock held elsewhere', () => {
  it('fails the upsert of a locked contact with 500 save_failed in time, saves nothing; the retry with the same key saves once', async () => {
    const address = email('locked');
    const first = await upsert({ email: address, firstName: 'Before' });
    expect(first.status).toBe(200);
    const key = `stall-${randomUUID()}`;
    const lock = await hold('select id from contacts where id = $1 for update', [first.body.id]);
    try {
      const r = await timed(upsert({ email: address, firstName: 'After' }, key));
      expect(r.status, JSON.stringify(r.body)).toBe(500);
      expect(r.body).toEqual(saveFailed('Failed to save contact'));
      expect(r.ms).toBeLessThan(BOUND_MS);
    } finally {
      await lock.release();
    }
    expect(await contact(address)).toEqual([{ first_name: 'Before' }]);
    expect(await records(key)).toEqual([]);

    const retry = await upsert({ email: address, firstName: 'After' }, key);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toEqual({ id: first.body.id, created: false, matchedBy: 'email' });
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await contact(address)).toEqual([{ first_name: 'After' }]);
    const again = await upsert({ email: address, firstName: 'After' }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers a write of another resource "Failed to save", and a read 503 with retry-after', async () => {
    const companies = await hold('lock table companies in access exclusive mode');
    try {
      const r = await timed(
        call(t, 'POST', '/companies/upsert', { key: org.publicKey, body: { domain: 'stalled.example', name: 'Stalled' } }),
      );
      expect(r.status, JSON.stringify(r.body)).toBe(500);
      expect(r.body).toEqual(saveFailed('Failed to save'));
      expect(r.ms).toBeLessThan(BOUND_MS);
    } finally {
      await companies.release();
    }
    const contacts = await hold('lock table contacts in access exclusive mode');
    try {
      expectUnavailable(await timed(call(t, 'GET', '/contacts/search?email=nobody@stall.example', { key: org.publicKey })));
    } finally {
      await contacts.release();
    }
    expect(
      (
        await retrying(() =>
          call(t, 'POST', '/companies/upsert', { key: org.publicKey, body: { domain: 'stalled.example', name: 'Stalled' } }),
        )
      ).status,
    ).toBe(200);
  });
});

describe('a pool with no connection free', () => {
  it('answers a contact write that waited out the acquire time-out 503 "Failed to save contact" with retry-after', async () => {
    // The request pool's two connections (open and idle: beforeEach), checked out and held idle (no transaction, so no
    // time-out ends the hold).
    const pool = t.runtime.deps.db.pool;
    const held: pg.PoolClient[] = [];
    try {
      held.push(await pool.connect());
      held.push(await pool.connect());
      const write = await timed(upsert({ email: email('pool') }));
      expect(write.status, JSON.stringify(write.body)).toBe(503);
      expect(write.body).toEqual({ error: 'Failed to save contact', code: 'service_unavailable' });
      expect(write.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      const internal = await fetch(`${t.origin}/api/contacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.internalKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: email('pool-app'), firstName: 'Pool' }),
      });
      expect([internal.status, ((await internal.json()) as { error: string }).error]).toEqual([503, 'Failed to save contact']);
      // Another resource's write, and a read, keep the generic words.
      expectUnavailable(await timed(call(t, 'POST', '/companies/upsert', { key: org.publicKey, body: { domain: 'pool.example' } })));
      expectUnavailable(await timed(call(t, 'GET', '/contacts/search?email=nobody@stall.example', { key: org.publicKey })));
    } finally {
      for (const c of held) c.release();
    }
  });
});

describe('frozen backends (SIGSTOP)', () => {
  it('answers a write 500 save_failed and a read 503 in time; once they run again, nothing of the write is there', async () => {
    freeze(backends);
    const address = email('frozen');
    const key = `stall-${randomUUID()}`;
    const [write, read] = await Promise.all([
      timed(upsert({ email: address }, key)),
      timed(call(t, 'GET', `/contacts/search?email=${encodeURIComponent(address)}`, { key: org.publicKey })),
    ]);
    expect(write.status, JSON.stringify(write.body)).toBe(500);
    expect(write.body).toEqual(saveFailed('Failed to save contact'));
    expect(write.ms).toBeLessThan(BOUND_MS);
    expectUnavailable(read);

    thaw();
    // Both connections were given up on and destroyed: their backends end as soon as they run again.
    await gone(backends);
    expect(await contact(address)).toEqual([]);
    expect(await records(key)).toEqual([]);
    // The client's retry, as the SDK makes it (a 503 says "try again"): the write then lands once.
    const retry = await retrying(() => upsert({ email: address }, key));
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ created: true });
    expect(await contact(address)).toHaveLength(1);
  });

  it('does not apply a write sent without an Idempotency-Key either, once the frozen server reads it after the answer', async () => {
    freeze(backends);
    const address = email('frozen-unkeyed');
    // A read beside it takes the pool's other frozen connection, so that both are given up on (and end once thawed).
    const [write, read] = await Promise.all([
      timed(upsert({ email: address })),
      timed(call(t, 'GET', `/contacts/search?email=${encodeURIComponent(address)}`, { key: org.publicKey })),
    ]);
    expect(write.status, JSON.stringify(write.body)).toBe(500);
    expect(write.body).toEqual(saveFailed('Failed to save contact'));
    expectUnavailable(read);
    thaw();
    // The statement was in the backend's socket all along: it runs now, past its deadline on the server's clock.
    await gone(backends);
    expect(await contact(address)).toEqual([]);
  });

  it('answers 503 with retry-after once no connection can be had at all (the whole cluster frozen), then recovers', async () => {
    const postmaster = Number((await fs.readFile(path.join(root, 'data', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    freeze([postmaster, ...childrenOf(postmaster)]);
    const answers = [];
    // The two pooled connections are given up on first; after them, new ones cannot be set up within the time-out.
    for (let i = 0; i < 3; i++) answers.push(await timed(upsert({ email: email('cluster') }, `stall-${randomUUID()}`)));
    for (const a of answers) {
      expect([500, 503], JSON.stringify(a.body)).toContain(a.status);
      expect(a.ms).toBeLessThan(BOUND_MS);
    }
    expectUnavailable(answers[2]!);
    expect((await timed(fetch(`${t.origin}/readyz`).then((r) => ({ status: r.status })))).status).toBe(503);

    thaw();
    await gone(backends);
    const after = await retrying(() => upsert({ email: email('after') }));
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect((await retrying(() => fetch(`${t.origin}/readyz`))).status).toBe(200);
  });
});
