import { randomUUID } from 'node:crypto';
import { jobDefinitions } from '../../../apps/server/src/jobs.ts';
import { runCleanup } from '#core/jobs/cleanup.ts';
import { dispatchEvents } from '#core/webhooks/delivery/dispatch.ts';
import { DeliveryPump, pumpOf } from '#core/webhooks/delivery/pump.ts';
import type { Jobs } from '#core/jobs/queue.ts';
import { DELIVER_QUEUE, sweepDeliveries } from '#core/webhooks/delivery/sweep.ts';
import { newWorkerKey } from '#core/webhooks/delivery/worker-lock.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, serve, type TestApp } from '../../support/app.ts';
import { runQueuedJobs } from '../../support/jobs.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, insertEndpoint, startEngine, upsertContact, waitForLog } from './support.ts';

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => rx?.close());

describe('a worker with no pump running (jobs run by hand)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true' });
    await pumpOf(t.runtime.deps).lock.acquire();
  });
  afterAll(async () => t?.close());

  it('drops a stale job: an attempt handed out again is sent once, by its current job only', async () => {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/stale`);
    await upsertContact(t, org.publicKey);
    expect(await dispatchEvents(t.runtime.deps.db, t.clock.now())).toBe(1);
    expect(await sweepDeliveries(t.runtime.deps.db, t.runtime.deps.jobs, t.clock.now())).toBe(1);
    // Nobody took it within the queue lease (60 s): it is handed out again with a new lease token.
    expect(await sweepDeliveries(t.runtime.deps.db, t.runtime.deps.jobs, t.clock.now())).toBe(0);
    t.clock.advance(60_001);
    expect(await sweepDeliveries(t.runtime.deps.db, t.runtime.deps.jobs, t.clock.now())).toBe(1);
    const [d] = await deliveriesOf(t, endpoint.id);
    const jobs = await t.sql(`select data from pgboss.job where name = ? and data @> ?::jsonb`, [
      DELIVER_QUEUE,
      JSON.stringify({ attempts: [{ deliveryId: d!.id }] }),
    ]);
    expect(jobs).toHaveLength(2);

    const deliver = jobDefinitions(t.runtime.deps).find((j) => j.queue === DELIVER_QUEUE)!;
    expect(await runQueuedJobs(t, deliver)).toHaveLength(2);
    // A job ends once its attempt is taken; the attempt itself runs on in the worker.
    await pumpOf(t.runtime.deps).active.settled();
    expect(rx.requests.filter((r) => r.url === '/stale')).toHaveLength(1);
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'succeeded', attempts: 1 });
    // Running the current job a second time (a duplicate) sends nothing either.
    const current = await t.sql<{ lease_token: string }>('select lease_token from webhook_deliveries where id = ?', [d!.id]);
    await deliver.handle({ attempts: [{ deliveryId: d!.id, leaseToken: current[0]!.lease_token }] });
    await pumpOf(t.runtime.deps).active.settled();
    expect(rx.requests.filter((r) => r.url === '/stale')).toHaveLength(1);
  });

  it('never dispatches an event twice, and takes it off the queue even with no endpoint to send to', async () => {
    const org = await t.newOrg();
    // Queued because an endpoint subscribes (issue 19: only those are), which is deleted before the round.
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/gone`);
    await upsertContact(t, org.publicKey);
    await t.sql('delete from webhook_endpoints where id = ?', [endpoint.id]);
    const queued = 'select q.event_id from outbox_pending q join outbox_events o on o.id = q.event_id where o.organization_id = ?';
    expect(await t.sql(queued, [org.orgId])).toHaveLength(1);
    expect(await dispatchEvents(t.runtime.deps.db, t.clock.now())).toBe(1);
    expect(await dispatchEvents(t.runtime.deps.db, t.clock.now())).toBe(0);
    expect(await t.sql(queued, [org.orgId])).toEqual([]);
    // The event itself stays, as written.
    expect(await t.sql('select event from outbox_events where organization_id = ?', [org.orgId])).toEqual([{ event: 'contact.created' }]);
  });

  it('queues every subscribed event an insert writes, whatever the statement, and nothing of a rolled-back one', async () => {
    const org = await t.newOrg();
    await insertEndpoint(t, org.orgId, `${rx.origin}/every`);
    const ids = [randomUUID(), randomUUID()];
    const insert = `insert into outbox_events (id, organization_id, event, payload, created_at) select unnest(?::uuid[]), ?, 'contact.created', '{}', now()`;
    await t.sql(insert, [ids, org.orgId]);
    const rolledBack = `do $$ begin insert into outbox_events (organization_id, event, payload) values ('${org.orgId}', 'contact.created', '{}'); raise exception 'rolled back'; end $$`;
    await expect(t.sql(rolledBack)).rejects.toThrow(/rolled back/);
    const queued = await t.sql<{ event_id: string }>(
      'select q.event_id from outbox_pending q join outbox_events o on o.id = q.event_id where o.organization_id = ?',
      [org.orgId],
    );
    expect(queued.map((r) => r.event_id).sort()).toEqual([...ids].sort());
  });

  it("prunes deliveries and their log after 30 days, and keeps the events and the current hour's counter", async () => {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/old`);
    await upsertContact(t, org.publicKey);
    await dispatchEvents(t.runtime.deps.db, t.clock.now());
    const [d] = await deliveriesOf(t, endpoint.id);
    await t.sql(
      `insert into webhook_attempts (organization_id, endpoint_id, delivery_id, event, attempt, outcome) values (?, ?, ?, 'contact.created', 1, 'failed')`,
      [org.orgId, endpoint.id, d!.id],
    );
    const now = t.clock.now();
    await t.sql('insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 5) on conflict do nothing', [
      `webhooks:${org.orgId}`,
      new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000),
    ]);
    const day = 86_400_000;
    await runCleanup(t.runtime.deps.db, new Date(now.getTime() + 30 * day - 60_000));
    expect(await deliveriesOf(t, endpoint.id)).toHaveLength(1);
    expect(await t.sql(`select bucket from rate_limit_counters where bucket = ?`, [`webhooks:${org.orgId}`])).toHaveLength(0);
    await t.sql('insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 5)', [
      `webhooks:${org.orgId}`,
      new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000),
    ]);
    await runCleanup(t.runtime.deps.db, new Date(now.getTime() + 59 * 60_000 - (now.getTime() % 3_600_000)));
    expect(await t.sql(`select bucket from rate_limit_counters where bucket = ?`, [`webhooks:${org.orgId}`])).toHaveLength(1);
    const result = await runCleanup(t.runtime.deps.db, new Date(now.getTime() + 30 * day + 60_000));
    expect(result.webhookDeliveries).toBeGreaterThanOrEqual(1);
    expect(await deliveriesOf(t, endpoint.id)).toEqual([]);
    expect(await t.sql('select id from webhook_attempts where delivery_id = ?', [d!.id])).toEqual([]);
    expect(await t.sql('select id from outbox_events where id = ?', [d!.event_id])).toHaveLength(1);
  });
});

describe("a pump round's hand-over", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true' });
  });
  afterAll(async () => t?.close());

  // The jobs' NOTIFY reaches this process's workers only while pg-boss's LISTEN connection is up, which after
  // PostgreSQL was away comes back 1 to 30 s after the database: deliveries waited for it (pg-restart.test.ts).
  it("wakes this process's deliver workers in memory once the jobs committed; a round with nothing to hand over does not", async () => {
    const real = t.runtime.deps.jobs;
    const woken: string[] = [];
    const jobs: Jobs = {
      send: (db, queue, data, options) => real.send(db, queue, data, options),
      sendMany: (db, queue, data) => real.sendMany(db, queue, data),
      wake: (queue) => void woken.push(queue.name),
    };
    const pump = new DeliveryPump({ ...t.runtime.deps, jobs });
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/hand-over`);
    await upsertContact(t, org.publicKey);
    await pump.tick();
    expect(woken).toEqual([DELIVER_QUEUE]);
    // The job it handed over is in the queue for the woken worker to fetch.
    const [d] = await deliveriesOf(t, endpoint.id);
    const queued = await t.sql(`select 1 from pgboss.job where name = ? and data @> ?::jsonb`, [
      DELIVER_QUEUE,
      JSON.stringify({ attempts: [{ deliveryId: d!.id }] }),
    ]);
    expect(queued).toHaveLength(1);
    await pump.tick();
    expect(woken).toEqual([DELIVER_QUEUE]);
  });
});

describe('two worker processes on one database', () => {
  let t: TestApp;
  let second: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    t = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', WEBHOOK_PUMP_INTERVAL_MS: '20' });
    second = await serve(t.runtime.deps.config, { clock: t.clock, migrate: false });
    await startEngine(t);
    await pumpOf(second.runtime.deps).start();
    await second.runtime.boss.work(jobDefinitions(second.runtime.deps).filter((d) => d.queue === DELIVER_QUEUE));
  });
  afterAll(async () => {
    await second?.app.close();
    await second?.runtime.close();
    await t?.close();
  });

  it('deliver each event exactly once', async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/pair`);
    for (let i = 0; i < 30; i++) await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 30);
    const requests = rx.requests.filter((r) => r.url === '/pair');
    expect(requests).toHaveLength(30);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(30);
    expect((await deliveriesOf(t, endpoint.id)).every((d) => d.state === 'succeeded' && d.attempts === 1)).toBe(true);
  });

  it('hands the attempts of a dead worker out again at once, and never those of a live one', async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/orphans`);
    const live = pumpOf(second.runtime.deps).lock.key;
    const lease = new Date(t.clock.now().getTime() + 3_600_000);
    // Two attempts stamped as taken, their leases far away: one by a key nobody holds (a killed worker), one by a live worker.
    for (const key of [newWorkerKey(), live]) {
      await t.sql(
        `insert into webhook_deliveries (organization_id, endpoint_id, event, body, state, attempts, next_attempt_at, first_attempt_at, lease_token, worker_key)
         values (?, ?, 'contact.created', ?, 'in_flight', 0, ?, ?, gen_random_uuid(), ?)`,
        [org.orgId, endpoint.id, JSON.stringify({ event: 'contact.created', key }), lease, t.clock.now(), key],
      );
    }
    // (Within 15 s of the server's start a missing lock is not trusted yet; the test cluster is usually older.)
    const [line] = await waitForLog(t, endpoint.id, 1, 30_000);
    expect(line).toMatchObject({ attempt: 1, outcome: 'succeeded' });
    for (let i = 0; i < 3; i++) await pumpOf(t.runtime.deps).nextRound();
    const rows = await t.sql<{ state: string; worker_key: string | null }>(
      'select state, worker_key from webhook_deliveries where endpoint_id = ? order by state',
      [endpoint.id],
    );
    expect(rows).toEqual([
      { state: 'in_flight', worker_key: live },
      { state: 'succeeded', worker_key: null },
    ]);
    expect(rx.requests.filter((r) => r.url === '/orphans')).toHaveLength(1);
  });
});
