/**
 * At least once across a PostgreSQL restart under load: a partner streams contact upserts (retrying on 503, as the
 * outage answer asks) while the delivery engine sends to a slow receiver; PostgreSQL is stopped and started again in
 * the middle. Every acknowledged contact must reach the receiver, as exactly one delivery (duplicate attempts of a
 * delivery are allowed by at-least-once, and counted). The cluster is a real one of this file's own (as in
 * test/api/db-outage.test.ts), since the run's shared cluster cannot be restarted.
 */
import fs from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { finished } from 'node:stream/promises';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '#db/embedded.ts';
import { QUEUE_LEASE_MS } from '#core/webhooks/delivery/policy.ts';
import { DELIVER_QUEUE } from '#core/webhooks/delivery/sweep.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../../support/app.ts';
import { freePort, sleep } from '../../support/process.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../../support/receiver.ts';
import { insertEndpoint, startEngine } from './support.ts';
import { scratchDir } from '../../support/scratch.ts';
import { fromPristine } from '../../support/pristine-cluster.ts';

let root: string;
let port: number;
let cluster: EmbeddedPostgresHandle | undefined;
let t: TestApp;
let rx: Receiver;

const startCluster = async () => (cluster = await startEmbeddedPostgres({ dataDir: path.join(root, 'data'), port }));

beforeAll(async () => {
  root = await scratchDir('pg-restart');
  await fromPristine(path.join(root, 'data'));
  port = await freePort();
  await startCluster();
  t = await initTestApp({ DATABASE_URL: cluster!.url, WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', WEBHOOK_PUMP_INTERVAL_MS: '50' });
  await startEngine(t);
  rx = await startReceiver();
});
afterAll(async () => {
  await t?.close().catch(() => {});
  await rx?.close();
  await cluster?.stop();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

const TOTAL = 200;
const CLIENTS = 4;
/** The restart starts once this many upserts were acknowledged and an attempt is under way. */
const RESTART_AT = 60;

interface Stream {
  acknowledged: string[];
  unavailable: number;
}

/**
 * One partner's stream: each upsert is retried until acknowledged, as the SDK does: 503 (no connection), 500
 * `save_failed` (a write cut off when PostgreSQL went; rolled back) and a refused connection mean "try again".
 */
async function stream(publicKey: string, client: number, onAck: (n: number) => void, s: Stream): Promise<void> {
  for (let i = client; i < TOTAL; i += CLIENTS) {
    const email = `restart-${i}@load.example`;
    for (let tries = 0; ; tries++) {
      const res = await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email, firstName: `N${i}` } }).catch(() => null);
      if (res && res.status >= 200 && res.status < 300) break;
      if (res && res.status !== 503 && (res.body as { code?: string } | null)?.code !== 'save_failed')
        throw new Error(`upsert ${email}: ${res.status} ${JSON.stringify(res.body)}`);
      if (tries > 300) throw new Error(`upsert ${email} never acknowledged`);
      s.unavailable++;
      await sleep(50);
    }
    s.acknowledged.push(email);
    onAck(s.acknowledged.length);
    await sleep(10);
  }
}

interface Row {
  id: string;
  state: string;
  email: string;
  lost: boolean;
}

const ROWS = `
select d.id, d.state, d.body::jsonb->'data'->'contact'->>'email' as email,
  d.state = 'in_flight' and d.worker_key is null and not exists (
    select 1 from pgboss.job j
    where j.name = '${DELIVER_QUEUE}' and j.data->'attempts' @> jsonb_build_array(jsonb_build_object('deliveryId', d.id::text))
      and j.state in ('created', 'retry', 'active')) as lost
from webhook_deliveries d where d.endpoint_id = ?`;

/**
 * Polls the endpoint's deliveries until `done` holds (a positive signal), for at most 120 s: the bound only ends a run
 * that is already failing, sized for a host three times slower than ours under a full suite.
 */
async function until(done: (rows: Row[]) => boolean, endpointId: string): Promise<Row[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const rows = await t.sql<Row>(ROWS, [endpointId]);
    if (done(rows)) return rows;
    if (Date.now() > deadline) {
      const states = rows.reduce<Record<string, number>>(
        (m, r) => ({ ...m, [r.lost ? 'lost' : r.state]: (m[r.lost ? 'lost' : r.state] ?? 0) + 1 }),
        {},
      );
      throw new Error(`${rows.length} deliveries of ${TOTAL} after 120 s: ${JSON.stringify(states)}`);
    }
    await sleep(100);
  }
}

/**
 * `work`, or a failure naming where it stood (`where()`) once `ms` have passed: a bound that only ends a run already
 * failing (a restart takes seconds), so that a stall says which step it was in instead of running into the test's
 * own time-out.
 */
async function within<T>(work: Promise<T>, ms: number, where: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done after ${ms / 1000} s: ${where()}`)), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

describe('PostgreSQL restarted under load', () => {
  it('loses no delivery: every acknowledged contact arrives, as exactly one delivery', { timeout: 300_000 }, async () => {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/restart`, { events: ['contact.created'] });
    const s: Stream = { acknowledged: [], unavailable: 0 };
    // Once RESTART_AT upserts were acknowledged, the receiver holds the attempts that arrive from then on (the worker's
    // batch under way); PostgreSQL is stopped with them pending, and only then are they answered: the worker must
    // record their outcomes once the database is back.
    const held: { req: ReceivedRequest; res: ServerResponse }[] = [];
    let gathered: () => void = () => {};
    const heldAll = new Promise<void>((resolve) => (gathered = resolve));
    let holding = false;
    rx.respond((req, res) => {
      if (!holding) return void setTimeout(() => res.writeHead(200).end('ok'), 150);
      held.push({ req, res });
      gathered();
    });
    let restart: Promise<void> | undefined;
    let step = 'not started';
    let stoppedAt = 0;
    let restartedAt = 0;
    const onAck = (n: number) => {
      if (n !== RESTART_AT) return;
      holding = true;
      restart = (async () => {
        step = 'waiting for an attempt to hold';
        await heldAll;
        step = 'stopping PostgreSQL';
        stoppedAt = Date.now();
        await cluster!.stop();
        cluster = undefined;
        holding = false;
        step = `answering the ${held.length} held attempts`;
        // An attempt's client may have gone meanwhile: its response then closes instead of finishing.
        await Promise.all(held.map(({ res }) => (res.writeHead(200).end('ok'), finished(res).catch(() => undefined))));
        step = 'starting PostgreSQL again';
        await startCluster();
        step = 'done';
        restartedAt = Date.now();
      })();
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => stream(org.publicKey, c, onAck, s)));
    await within(restart ?? Promise.resolve(), 60_000, () => `the restart, ${step}`);
    const streamed = Date.now();
    expect(s.acknowledged).toHaveLength(TOTAL);
    expect(restartedAt).toBeGreaterThan(0);
    expect(held.length).toBeGreaterThan(0);

    // First, wait until nothing is under way: each delivery succeeded, or its attempt was lost track of (in flight
    // under no worker, no job left: the job was fetched as PostgreSQL went, and failed before it could take the
    // attempt). Those go out again when their queue lease ends, on the application clock: a minute later.
    let rows = await until((r) => r.length >= TOTAL && r.every((d) => d.state === 'succeeded' || d.lost), endpoint.id);
    const lost = rows.filter((d) => d.lost).length;
    if (lost > 0) {
      t.clock.advance(QUEUE_LEASE_MS);
      rows = await until((r) => r.length >= TOTAL && r.every((d) => d.state === 'succeeded'), endpoint.id);
    }
    const done = Date.now();

    // One delivery per contact, and none for anything else.
    expect(rows.map((r) => r.email).sort()).toEqual([...s.acknowledged].sort());
    const contacts = await t.sql<{ email: string }>('select email from contacts where organization_id = ?', [org.orgId]);
    expect(contacts.map((c) => c.email).sort()).toEqual([...s.acknowledged].sort());

    // At the receiver: every delivery (webhook-id) arrived, each for its own contact; extra attempts are duplicates.
    const received = rx.requests.filter((r) => r.url === '/restart');
    const byDelivery = new Map<string, string>();
    for (const r of received) {
      const email = (JSON.parse(r.rawBody.toString()) as { data: { contact: { email: string } } }).data.contact.email;
      const id = String(r.headers['webhook-id']);
      expect(byDelivery.get(id) ?? email).toBe(email);
      byDelivery.set(id, email);
    }
    expect([...byDelivery.keys()].sort()).toEqual(rows.map((r) => r.id).sort());
    const duplicates = received.length - byDelivery.size;
    const xIds = new Set(received.map((r) => r.headers['x-webhook-id']));
    expect(xIds.size).toBe(received.length);
    // The log holds a line per attempt whose outcome could be recorded: at least one success per delivery.
    const [log] = await t.sql<{ ok: number }>(
      `select count(distinct delivery_id)::int as ok from webhook_attempts where endpoint_id = ? and outcome = 'succeeded'`,
      [endpoint.id],
    );
    expect(log!.ok).toBe(TOTAL);
    // The attempts answered while PostgreSQL was down were recorded by their worker once it was back (not sent again).
    const heldIds = held.map(({ req }) => String(req.headers['x-webhook-id']));
    const recorded = await t.sql<{ id: string }>(`select id from webhook_attempts where id = any(?::uuid[]) and outcome = 'succeeded'`, [
      heldIds,
    ]);
    expect(recorded.map((r) => r.id).sort()).toEqual(heldIds.sort());
    console.info(
      `pg-restart: ${TOTAL} upserts (${s.unavailable} answers 503 or refused) in ${streamed - started} ms; PostgreSQL down ` +
        `${stoppedAt - started}-${restartedAt - started} ms in; all delivered ${done - started} ms in; ${received.length} requests (${held.length} answered while it was down), ${duplicates} duplicate attempts, ` +
        `${lost} sent after their queue lease`,
    );
  });
});
