/**
 * Issue 27: a single /v1 write (a contact upsert, a lead, a company upsert) is one round trip and one transaction, and
 * the cases of its own that come with that: two first writes of one email through two server processes, a replay
 * racing its original, and a request the key's window refuses, which writes nothing (not even when it took the last
 * place at the same moment as another). Races are made, not hoped for: the test holds a lock both requests wait on,
 * waits until PostgreSQL shows them waiting, then lets them go.
 */
import { randomUUID } from 'node:crypto';
import { hashKey } from '@leadwire/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { freshMinute, type PeerServer, startPeer, windowStart } from '../support/bursts.ts';
import { aboutKey, heard } from '../support/key-changes.ts';

const LIMIT = 600;

let t: TestApp;
let server: PeerServer;
/** The same API served by a second server on the same database: another process, as far as memory goes. */
let peer: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let holder: pg.Client;
beforeAll(async () => {
  t = await initTestApp();
  server = await startPeer(t);
  peer = { ...t, origin: server.origin, v1: server.v1 };
  org = await t.newOrg({ plan: 'max' });
  holder = new pg.Client({ connectionString: t.runtime.deps.config.DATABASE_URL });
  await holder.connect();
});
afterAll(async () => {
  await holder?.end();
  await server?.close();
  await t?.close();
});

let n = 0;
const email = (label: string) => `${label}-${++n}-${randomUUID().slice(0, 8)}@write-path.example`;
const post = (app: TestApp, path: string, body: unknown, opts: { key?: string; idem?: string } = {}) =>
  call(app, 'POST', path, { key: opts.key ?? org.publicKey, body, headers: opts.idem ? { 'idempotency-key': opts.idem } : {} });

/**
 * A Public API key of the test organization, with every write permission, once the server has heard of it: a key's
 * look-up that overlaps the announcement of its creation is not remembered (KeyGuard), and would be made again.
 */
async function newKey(): Promise<string> {
  const key = await t.newKey({
    orgId: org.orgId,
    userId: org.userId,
    name: 'write path',
    type: 'public',
    permissions: ['contacts:write', 'leads:write', 'companies:write'],
  });
  const told = heard(t.runtime, aboutKey(key));
  await t.sql('update api_keys set expires_at = expires_at where key_hash = ?', [hashKey(key)]);
  await told;
  return key;
}

/**
 * Waits until `count` backends wait for a lock the test's own connection holds: an event PostgreSQL shows, never a
 * pause. Read from the locks themselves, since a request's backend that is new may not show its database yet.
 */
async function waiting(count: number): Promise<void> {
  for (const deadline = Date.now() + 30_000; ; ) {
    const { rows } = await holder.query<{ n: number }>(
      `select count(distinct l.pid)::int as n from pg_locks l where not l.granted and pg_backend_pid() = any(pg_blocking_pids(l.pid))`,
    );
    if ((rows[0]?.n ?? 0) >= count) return;
    if (Date.now() > deadline) throw new Error(`${count} requests never waited on the test's lock`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The key's count in the clock's current minute. */
async function counted(key: string): Promise<number> {
  const rows = await t.sql<{ count: number }>(
    `select c.count from rate_limit_counters c join api_keys k on c.bucket = 'key:' || k.id where k.key_hash = ? and c.window_start = ?`,
    [hashKey(key), windowStart(t.clock, 'minute')],
  );
  return Number(rows[0]?.count ?? 0);
}

/** Sets a key's count in the clock's current minute, as if `count` requests had been made in it. */
async function spend(key: string, count: number): Promise<void> {
  await t.sql(
    `insert into rate_limit_counters (bucket, window_start, count) select 'key:' || id, ?, ? from api_keys where key_hash = ?
     on conflict (bucket, window_start) do update set count = excluded.count`,
    [windowStart(t.clock, 'minute'), count, hashKey(key)],
  );
}

const traffic = () => ({ ...t.runtime.deps.db.traffic });

describe('one round trip, one transaction', () => {
  it.each([
    ['a new contact', () => ({ path: '/contacts/upsert', body: { email: email('new'), firstName: 'Ada', tags: ['a'] }, idem: undefined })],
    [
      'an existing contact, with an Idempotency-Key',
      () => ({ path: '/contacts/upsert', body: { email: 'existing@write-path.example', tags: [`t${++n}`] }, idem: randomUUID() }),
    ],
    ['a lead', () => ({ path: '/leads', body: { email: email('lead'), score: 40 }, idem: undefined })],
    ['a company', () => ({ path: '/companies/upsert', body: { domain: `co${++n}.write-path.example`, name: 'Co' }, idem: randomUUID() })],
  ])('%s: one statement, no begin, and every row it wrote in one transaction', async (_label, make) => {
    const key = await newKey();
    // The key's first request looks it up by hash once; the process then knows it.
    expect((await post(t, '/contacts/upsert', { email: 'existing@write-path.example' }, { key })).status).toBe(200);
    const { path, body, idem } = make();
    const before = traffic();
    const r = await post(t, path, body, { key, ...(idem ? { idem } : {}) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const after = traffic();
    expect({ roundTrips: after.roundTrips - before.roundTrips, transactions: after.transactions - before.transactions }).toEqual({
      roundTrips: 1,
      transactions: 0,
    });
    // The rows it wrote carry one transaction id: the events' (xid8), and every row's xmin (its low 32 bits).
    const xids = await t.sql<{ xid: string }>(
      `select distinct (txid::text::numeric % 4294967296)::text as xid from outbox_events where request_id = ?`,
      [r.headers.get('x-request-id')],
    );
    const written = [
      ...(await t.sql<{ xid: string }>(`select xmin::text as xid from contacts where id = ?`, [r.body.id])),
      ...(await t.sql<{ xid: string }>(`select xmin::text as xid from companies where id = ?`, [r.body.id])),
      ...(await t.sql<{ xid: string }>(
        `select c.xmin::text as xid from rate_limit_counters c join api_keys k on c.bucket = 'key:' || k.id where k.key_hash = ? and c.window_start = ?`,
        [hashKey(key), windowStart(t.clock, 'minute')],
      )),
      ...(idem ? await t.sql<{ xid: string }>(`select xmin::text as xid from idempotency_records where key = ?`, [idem]) : []),
    ];
    expect(written.length).toBeGreaterThanOrEqual(idem ? 3 : 2);
    const one = new Set([...xids, ...written].map((x) => x.xid));
    expect(one.size, JSON.stringify([...xids, ...written])).toBe(1);
  });
});

describe('two first writes of one email, through two server processes', () => {
  it('create one contact: the second waits for the first and merges into it, counted once, an event each', async () => {
    const address = email('race');
    await holder.query('begin');
    await holder.query('lock table contacts in share row exclusive mode');
    const first = post(t, '/contacts/upsert', { email: address, firstName: 'Ada', tags: ['first'] });
    const second = post(peer, '/contacts/upsert', { email: address, lastName: 'Lovelace', tags: ['second'] });
    await waiting(2);
    await holder.query('rollback');
    const answers = await Promise.all([first, second]);
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(answers.map((a) => a.body.id)[0]).toBe(answers[1].body.id);
    expect(answers.map((a) => [a.body.created, a.body.matchedBy]).sort()).toEqual([
      [false, 'email'],
      [true, null],
    ]);
    const rows = await t.sql<any>('select first_name, last_name, tags from contacts where organization_id = ? and email = ?', [
      org.orgId,
      address,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace' });
    expect([...rows[0].tags].sort()).toEqual(['first', 'second']);
    const events = await t.sql<{ event: string }>(
      `select event from outbox_events where payload->'data'->'contact'->>'id' = ? order by txid, seq`,
      [answers[0].body.id],
    );
    // The first write's, and the second's: its update and the tag it added (names do not move the score).
    expect(events.map((e) => e.event).sort()).toEqual(['contact.created', 'contact.tag_added', 'contact.updated']);
  });
});

describe('a replay racing its original', () => {
  it('in another process is told "in progress" while the original runs, then gets its answer: written once', async () => {
    const address = email('replay');
    const created = await post(t, '/contacts/upsert', { email: address });
    const idem = randomUUID();
    const body = { email: address, lastName: 'Original', tags: ['once'] };
    await holder.query('begin');
    try {
      // The original holds its Idempotency-Key's lock and waits on the contact's row.
      await holder.query('select id from contacts where id = $1 for update', [created.body.id]);
      const original = post(t, '/contacts/upsert', body, { idem });
      await waiting(1);
      const during = await post(peer, '/contacts/upsert', body, { idem });
      expect(during.status, JSON.stringify(during.body)).toBe(409);
      expect(during.body.code).toBe('idempotency_in_progress');
      await holder.query('rollback');
      const done = await original;
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      // Through the other process again, and through the same one: the stored answer, not a second write.
      for (const app of [peer, t]) {
        const again = await post(app, '/contacts/upsert', body, { idem });
        expect(again.status, JSON.stringify(again.body)).toBe(200);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(again.body).toEqual(done.body);
      }
    } finally {
      await holder.query('rollback').catch(() => {});
    }
    const updates = await t.sql(`select 1 from outbox_events where event = 'contact.updated' and payload->'data'->'contact'->>'id' = ?`, [
      created.body.id,
    ]);
    expect(updates).toHaveLength(1);
    expect(await t.sql('select 1 from idempotency_records where key = ?', [idem])).toHaveLength(1);
  });
});

describe("a write the key's window refuses", () => {
  it('writes nothing: no contact, no event, no stored answer; the request is counted', async () => {
    const key = await newKey();
    freshMinute(t.clock);
    // Spent in the database, not yet known to the process: the write's own call is what refuses it.
    await spend(key, LIMIT);
    const address = email('refused');
    const idem = randomUUID();
    const r = await post(t, '/contacts/upsert', { email: address, tags: ['x'] }, { key, idem });
    expect(r.status, JSON.stringify(r.body)).toBe(429);
    expect(r.body.code).toBe('rate_limited');
    expect(await t.sql('select 1 from contacts where email = ?', [address])).toHaveLength(0);
    expect(await t.sql(`select 1 from outbox_events where payload->'data'->'contact'->>'email' = ?`, [address])).toHaveLength(0);
    expect(await t.sql('select 1 from idempotency_records where key = ?', [idem])).toHaveLength(0);
    expect(await counted(key)).toBe(LIMIT + 1);
  });

  it('writes nothing when it took the last place at the same moment as another, which writes', async () => {
    const key = await newKey();
    freshMinute(t.clock);
    await spend(key, LIMIT - 1);
    const [a, b] = [email('last-a'), email('last-b')];
    await holder.query('begin');
    await holder.query('lock table contacts in share row exclusive mode');
    // Both saw one place left, and wait to write.
    const answers = Promise.all([
      post(t, '/contacts/upsert', { email: a }, { key }),
      post(peer, '/contacts/upsert', { email: b }, { key }),
    ]);
    await waiting(2);
    await holder.query('rollback');
    const [ra, rb] = await answers;
    expect([ra.status, rb.status].sort()).toEqual([200, 429]);
    const written = await t.sql<{ email: string }>('select email from contacts where email = any(?)', [[a, b]]);
    expect(written.map((w) => w.email)).toEqual([ra.status === 200 ? a : b]);
    const refused = ra.status === 200 ? b : a;
    expect(await t.sql(`select 1 from outbox_events where payload->'data'->'contact'->>'email' = ?`, [refused])).toHaveLength(0);
    // The winner's count, then the loser's: rolled back with its write, then counted alone.
    expect(await counted(key)).toBe(LIMIT + 1);
  });
});
