/**
 * At least once, across real processes: `ROLE=api` and `ROLE=worker` servers (apps/server/src/main.ts) share one
 * database; a worker is SIGKILLed in the middle of an attempt, or between the dispatch of an event and the queueing of
 * its attempt, and a second worker delivers what the first one left: nothing is lost, and nothing is sent twice at once.
 */
import type { ServerResponse } from 'node:http';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { adminHere } from '../../support/admin.ts';
import { createTestDatabase, type TestDatabase } from '../../support/db.ts';
import { api, killLeftovers, type ServerProcess, sleep, startServer } from '../../support/process.ts';
import { type Receiver, startReceiver, TEST_CA_PATH } from '../../support/receiver.ts';
import { ATTEMPT_LEASE_MS } from '#core/webhooks/delivery/policy.ts';
import { DELIVER_QUEUE } from '#core/webhooks/delivery/sweep.ts';
import { expectSigned } from './support.ts';

interface Setup {
  env: Record<string, string>;
  sql: pg.Client;
  api: ServerProcess;
  publicKey: string;
  endpoint: { id: string; secret: string };
  rx: Receiver;
  /** Requests the receiver holds open and never answers (a receiver slow enough to be caught mid-attempt). */
  held: ServerResponse[];
}

const cleanups: (() => Promise<unknown>)[] = [];
const dbs: TestDatabase[] = [];
afterEach(async () => {
  await killLeftovers();
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});
afterAll(async () => {
  await killLeftovers();
  await Promise.all(dbs.map((d) => d.drop()));
});

/** A database, its org and keys, an api process, and an endpoint created through the API to a receiver that holds requests. */
async function setup(label: string): Promise<Setup> {
  const db = await createTestDatabase(label, { migrated: true });
  dbs.push(db);
  const held: ServerResponse[] = [];
  const rx = await startReceiver({ responder: (_req, res) => void held.push(res) });
  cleanups.push(async () => {
    for (const res of held) res.destroy();
    await rx.close();
  });
  const sql = new pg.Client({ connectionString: db.url });
  sql.on('error', () => {});
  await sql.connect();
  cleanups.push(() => sql.end());

  const env = {
    DATABASE_URL: db.url,
    WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true',
    NODE_EXTRA_CA_CERTS: TEST_CA_PATH,
    WEBHOOK_PUMP_INTERVAL_MS: '50',
  };
  const boot = await adminHere(
    ['bootstrap', '--org', 'Crash', '--email', `crash-${Date.now()}@example.com`, '--password', 'crash test password'],
    { DATABASE_URL: db.url },
  );
  expect(boot.code, boot.stderr).toBe(0);
  const { publicKey, internalKey } = JSON.parse(boot.stdout) as { publicKey: string; internalKey: string };
  const apiProcess = await startServer({ ...env, ROLE: 'api' });
  await apiProcess.waitReady();
  const res = await fetch(`${apiProcess.origin}/api/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${internalKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${rx.origin}/hook`, events: ['contact.created'] }),
  });
  const endpoint = (await res.json()) as { id: string; secret: string; enabled: boolean };
  expect([res.status, endpoint.enabled]).toEqual([201, true]);
  return { env, sql, api: apiProcess, publicKey, endpoint, rx, held };
}

async function startWorker(s: Setup): Promise<ServerProcess> {
  const worker = await startServer({ ...s.env, ROLE: 'worker' });
  await worker.waitForOutput(/"msg":"leadwire ready"/);
  return worker;
}

async function kill(worker: ServerProcess): Promise<void> {
  worker.child.kill('SIGKILL');
  expect(await worker.exited).toEqual({ code: null, signal: 'SIGKILL' });
}

async function upsert(s: Setup, email: string): Promise<void> {
  const res = await api(s.api.origin, 'POST', '/contacts/upsert', { key: s.publicKey, body: { email } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Polls a query until `done` holds for its rows (a positive signal), or fails after `timeoutMs`. */
async function until<T extends pg.QueryResultRow>(
  s: Setup,
  query: string,
  params: unknown[],
  done: (rows: T[]) => boolean,
  timeoutMs = 30_000,
): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await s.sql.query<T>(query, params);
    if (done(rows)) return rows;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(rows)} after ${timeoutMs} ms: ${query}`);
    await sleep(50);
  }
}

interface Delivery {
  id: string;
  state: string;
  attempts: number;
  worker_key: string | null;
}

const DELIVERIES = 'select id, state, attempts, worker_key from webhook_deliveries where endpoint_id = $1';

/**
 * Once every job naming the delivery is finished (a job ends when its attempts are taken, so even the killed worker's
 * completed before the kill) and the delivery succeeded, no attempt of it can start any more (a succeeded delivery is
 * never claimed again): what the receiver holds then is final.
 */
async function settled(s: Setup, deliveryId: string): Promise<void> {
  await until<{ state: string }>(
    s,
    `select state from pgboss.job where name = $1 and data->'attempts' @> jsonb_build_array(jsonb_build_object('deliveryId', $2::text))`,
    [DELIVER_QUEUE, deliveryId],
    (jobs) => jobs.length > 0 && jobs.every((j) => j.state === 'completed'),
  );
}

describe('a worker SIGKILLed', { timeout: 180_000 }, () => {
  it('in the middle of an attempt: a second worker sends it again (same webhook-id, new X-Webhook-Id), once, and records it', async () => {
    const s = await setup('worker_kill_mid');
    const first = await startWorker(s);
    await upsert(s, 'mid-attempt@crash.example');

    // The receiver holds the first request open: the attempt is under way, taken under the first worker's key.
    const [held] = await s.rx.waitFor(1, 60_000);
    const [taken] = await until<Delivery>(s, DELIVERIES, [s.endpoint.id], (rows) => rows.length === 1);
    expect(taken).toMatchObject({ state: 'in_flight', attempts: 0, worker_key: expect.stringMatching(/^\d+$/) });
    await kill(first);

    s.rx.respond((_req, res) => void res.writeHead(200).end('ok'));
    const second = await startWorker(s);
    // Handed out again at once, not when the attempt's lease ends (that would be the path of a live worker that lost
    // track of it). Within 15 s of the cluster's start a missing lock is not trusted yet (sweep.ts): hence the margin.
    const [, again] = await s.rx.waitFor(2, ATTEMPT_LEASE_MS);
    expect(again!.at - held!.at).toBeLessThan(ATTEMPT_LEASE_MS - 10_000);
    const [done] = await until<Delivery>(s, DELIVERIES, [s.endpoint.id], (rows) => rows[0]?.state === 'succeeded');
    expect(done).toMatchObject({ id: taken!.id, attempts: 1, worker_key: null });
    await settled(s, taken!.id);

    expect(again!.headers['webhook-id']).toBe(taken!.id);
    expect(held!.headers['webhook-id']).toBe(taken!.id);
    expect(again!.headers['x-webhook-id']).not.toBe(held!.headers['x-webhook-id']);
    expect(again!.rawBody.equals(held!.rawBody)).toBe(true);
    expectSigned(again!, s.endpoint.secret);
    expect(JSON.parse(again!.rawBody.toString())).toMatchObject({
      event: 'contact.created',
      source: 'api',
      data: { contact: { email: 'mid-attempt@crash.example' } },
    });
    expect(s.rx.requests).toHaveLength(2);
    // The killed attempt left no line (its worker never heard back); the second one is the log's only line.
    const { rows: log } = await s.sql.query('select id, attempt, outcome, status_code from webhook_attempts where delivery_id = $1', [
      taken!.id,
    ]);
    expect(log).toEqual([{ id: again!.headers['x-webhook-id'], attempt: 1, outcome: 'succeeded', status_code: 200 }]);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });

  it('between the dispatch of an event and the queueing of its attempt: a second worker sends it, once', async () => {
    const s = await setup('worker_kill_claim');
    s.rx.respond((_req, res) => void res.writeHead(200).end('ok'));
    // A pause point: the sweeper's claim of a pending delivery waits on an advisory lock this test holds.
    const PAUSE = 7_700_001;
    await s.sql.query(
      `create function crash_test_pause() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock_shared(${PAUSE}); return new; end $$`,
    );
    await s.sql.query(`create trigger crash_test_pause before update on webhook_deliveries for each row
      when (old.state = 'pending' and new.state = 'in_flight') execute function crash_test_pause()`);
    await s.sql.query('select pg_advisory_lock($1)', [PAUSE]);
    const first = await startWorker(s);
    await upsert(s, 'before-claim@crash.example');

    // The first worker dispatched the event (its delivery is committed, pending) and is stuck claiming it.
    const WAITING = `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'advisory'`;
    await until(s, WAITING, [], (rows) => rows.length === 1, 60_000);
    const [pending] = await until<Delivery>(s, DELIVERIES, [s.endpoint.id], (rows) => rows.length === 1);
    expect(pending).toMatchObject({ state: 'pending', attempts: 0, worker_key: null });
    await kill(first);

    // Let the dead worker's claim run on: its transaction can never commit now, and rolls back.
    await s.sql.query('select pg_advisory_unlock($1)', [PAUSE]);
    await s.sql.query('drop trigger crash_test_pause on webhook_deliveries');
    expect((await s.sql.query<Delivery>(DELIVERIES, [s.endpoint.id])).rows).toEqual([pending]);
    expect(s.rx.requests).toHaveLength(0);

    const second = await startWorker(s);
    const [sent] = await s.rx.waitFor(1, 60_000);
    const [done] = await until<Delivery>(s, DELIVERIES, [s.endpoint.id], (rows) => rows[0]?.state === 'succeeded');
    expect(done).toMatchObject({ id: pending!.id, attempts: 1 });
    await settled(s, pending!.id);
    expect(sent!.headers['webhook-id']).toBe(pending!.id);
    expectSigned(sent!, s.endpoint.secret);
    expect(s.rx.requests).toHaveLength(1);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });
});
