/**
 * `Idempotency-Key` when things go wrong: the write and its stored answer commit in one transaction, so after a crash
 * at any point a retry either replays the committed answer or runs a write that never happened, at once; a duplicate
 * arriving while the first is in flight is told so without waiting.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { type ServerProcess, startServer } from '../support/process.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let dbUrl: string;
beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg();
  dbUrl = t.runtime.deps.config.DATABASE_URL!;
});
afterAll(async () => t?.close());

type Res = Awaited<ReturnType<typeof call>>;
const ikey = () => `idem-${randomUUID()}`;
const email = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;
const post = (path: string, body: unknown, idem?: string) =>
  call(t, 'POST', path, { key: org.publicKey, body, headers: idem === undefined ? {} : { 'idempotency-key': idem } });
const replayed = (r: Res) => r.headers.get('idempotent-replayed');
const records = (key: string) => t.sql<{ status: number }>('select status from idempotency_records where key = ?', [key]);
const contactsWith = (address: string) =>
  t.sql<{ id: string; first_name: string | null }>('select id, first_name from contacts where email = ?', [address]);

/** Polls until `check` holds: for work running elsewhere to reach a point, never to show that nothing happened. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The one server backend waiting on a lock the test holds. */
async function waitingBackend(): Promise<number> {
  let pids: number[] = [];
  await until('a request to wait on the test lock', async () => {
    const rows = await t.sql<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
    );
    pids = rows.map((r) => r.pid);
    return pids.length === 1;
  });
  return pids[0]!;
}

/** Ends a backend and waits until it is gone, as PostgreSQL does once it notices its client died. */
const terminate = (pid: number) => t.sql('select pg_terminate_backend(?::int, 10000) as ended', [pid]);

/** A connection of the test's own, to hold locks in an open transaction. */
async function holder(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  await c.query('begin');
  return c;
}

async function existingContact(label: string): Promise<{ id: string; address: string }> {
  const address = email(label);
  const r = await post('/contacts/upsert', { email: address });
  expect(r.status).toBe(200);
  return { id: r.body.id, address };
}

describe('a crash in flight', () => {
  it('lets the retry of a request whose process died run at once, on another process', { timeout: 60_000 }, async () => {
    const { id, address } = await existingContact('crash');
    const lock = await holder();
    let other: ServerProcess | undefined;
    try {
      other = await startServer({ DATABASE_URL: dbUrl, ROLE: 'api', LOG_LEVEL: 'silent' });
      await other.waitReady();
      await lock.query('select id from contacts where id = $1 for update', [id]);
      const key = ikey();
      const body = { email: address, firstName: 'Crash' };
      const inFlight = fetch(`${other.origin}/api/v1/contacts/upsert`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.publicKey}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      }).then(
        (r) => r.status,
        () => 'no answer',
      );
      const pid = await waitingBackend();
      await other.stop('SIGKILL');
      expect(await inFlight).toBe('no answer');
      await terminate(pid);
      await lock.query('rollback');

      const retry = await post('/contacts/upsert', body, key);
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.body).toEqual({ id, created: false, matchedBy: 'email' });
      expect(replayed(retry)).toBeNull();
      expect(await contactsWith(address)).toEqual([{ id, first_name: 'Crash' }]);
      const again = await post('/contacts/upsert', body, key);
      expect(replayed(again)).toBe('true');
      expect(again.body).toEqual(retry.body);
    } finally {
      await other?.stop('SIGKILL');
      await lock.end();
    }
  });

  it('rolls the write back with its answer when the transaction dies after writing: the retry creates it, once', async () => {
    const address = email('atomic');
    const key = ikey();
    const [apiKey] = await t.sql<{ id: string }>(`select id from api_keys where organization_id = ? and type = 'public'`, [org.orgId]);
    // An uncommitted record of the same key makes the request wait at the very end, after its write.
    const lock = await holder();
    try {
      await lock.query(
        `insert into idempotency_records (api_key_id, key, request_hash, status, response, created_at) values ($1, $2, 'held', 200, 'null', now())`,
        [apiKey!.id, key],
      );
      const first = post('/contacts/upsert', { email: address }, key);
      await terminate(await waitingBackend());
      expect((await first).status).toBeGreaterThanOrEqual(500);
      await lock.query('rollback');
    } finally {
      await lock.end();
    }
    expect(await contactsWith(address)).toEqual([]);
    expect(await records(key)).toEqual([]);

    const retry = await post('/contacts/upsert', { email: address }, key);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ created: true, matchedBy: null });
    expect(replayed(retry)).toBeNull();
    expect(await contactsWith(address)).toHaveLength(1);
  });
});

describe('a duplicate while the first is in flight', () => {
  it('is answered 409 idempotency_in_progress at once; once the first commits, its answer is replayed', async () => {
    const { id, address } = await existingContact('inflight');
    const key = ikey();
    const body = { email: address, lastName: 'First' };
    const lock = await holder();
    let first: Promise<Res>;
    try {
      await lock.query('select id from contacts where id = $1 for update', [id]);
      first = post('/contacts/upsert', body, key);
      await waitingBackend();
      const duplicate = await post('/contacts/upsert', body, key);
      expect(duplicate.status).toBe(409);
      expect(duplicate.body).toEqual({ error: expect.any(String), code: 'idempotency_in_progress' });
      const changed = await post('/contacts/upsert', { email: address, lastName: 'Second' }, key);
      expect(changed.body.code).toBe('idempotency_in_progress');
    } finally {
      await lock.query('rollback');
      await lock.end();
    }
    const done = await first;
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ id, created: false, matchedBy: 'email' });
    const later = await post('/contacts/upsert', body, key);
    expect(replayed(later)).toBe('true');
    expect(later.body).toEqual(done.body);
  });
});

describe('an answer that never reached the client', () => {
  it('is replayed exactly: a batch of 100 new contacts replays created 100, not updated 100', async () => {
    const key = ikey();
    const rows = Array.from({ length: 100 }, (_, i) => ({ email: email(`held-${i}`) }));
    // The reply is held: the retry goes out once the first request has committed, before its answer is read.
    const first = post('/contacts/batch-upsert', { contacts: rows }, key);
    await until('the first batch to commit', async () => (await records(key)).length === 1);
    const retry = await post('/contacts/batch-upsert', { contacts: rows }, key);
    expect(replayed(retry)).toBe('true');
    expect(retry.body).toMatchObject({ created: 100, updated: 0, failed: 0 });
    const held = await first;
    expect(replayed(held)).toBeNull();
    expect(retry.body).toEqual(held.body);
    const [stored] = await t.sql<{ n: number }>('select count(*)::int as n from contacts where organization_id = ? and email like ?', [
      org.orgId,
      'held-%',
    ]);
    expect(stored!.n).toBe(100);
  });

  it('is replayed when the client hung up before reading it', async () => {
    const address = email('hungup');
    const key = ikey();
    const body = JSON.stringify({ email: address, firstName: 'Gone' });
    const socket = net.connect({ port: Number(new URL(t.origin).port), host: '127.0.0.1' });
    try {
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      // Half-closed after the request: the server reads all of it, and its answer goes nowhere.
      socket.end(
        `POST /api/v1/contacts/upsert HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${org.publicKey}\r\n` +
          `content-type: application/json\r\nidempotency-key: ${key}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await until('the request to commit', async () => (await records(key)).length === 1);
    } finally {
      socket.destroy();
    }
    const [contact] = await contactsWith(address);
    const retry = await post('/contacts/upsert', JSON.parse(body), key);
    expect(replayed(retry)).toBe('true');
    expect(retry.body).toEqual({ id: contact!.id, created: true, matchedBy: null });
    expect(await contactsWith(address)).toHaveLength(1);
  });
});
