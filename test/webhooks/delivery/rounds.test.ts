import { jobDefinitions } from '../../../apps/server/src/jobs.ts';
import { Coalescer } from '#core/webhooks/delivery/coalesce.ts';
import { dispatchEvents } from '#core/webhooks/delivery/dispatch.ts';
import { InFlight } from '#core/webhooks/delivery/in-flight.ts';
import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { recordAttempts } from '#core/webhooks/delivery/record.ts';
import { DELIVER_QUEUE, type DeliverJob, sweepDeliveries } from '#core/webhooks/delivery/sweep.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, endpointRow, insertEndpoint, upsertContact, waitForLog, startDeliveringApp } from './support.ts';

describe('Coalescer (group commit of per-attempt statements)', () => {
  it('runs the items pushed in one turn as one round, and those pushed meanwhile as the next', async () => {
    const rounds: number[][] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const c = new Coalescer<number, number>(async (items) => {
      rounds.push(items);
      if (rounds.length === 1) await held;
      return items.map((i) => i * 10);
    }, 100);
    const first = [c.push(1), c.push(2), c.push(3)];
    await new Promise((r) => setImmediate(r));
    const later = [c.push(4), c.push(5)];
    release();
    expect(await Promise.all([...first, ...later])).toEqual([10, 20, 30, 40, 50]);
    expect(rounds).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('caps a round at its maximum, and a failed round rejects its own items only', async () => {
    const rounds: number[][] = [];
    const c = new Coalescer<number, number>(async (items) => {
      rounds.push(items);
      if (items.includes(2)) throw new Error('round failed');
      return items;
    }, 2);
    const results = await Promise.allSettled([c.push(1), c.push(2), c.push(3)]);
    expect(rounds).toEqual([[1, 2], [3]]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
  });
});

describe('InFlight (the attempts a worker sends at once)', () => {
  it('holds new work back while full and lets it in as attempts finish', async () => {
    const inFlight = new InFlight(2);
    const done: (() => void)[] = [];
    const start = () =>
      inFlight.start(
        async () => 'taken',
        () => new Promise<void>((r) => done.push(r)),
      );
    await start();
    await start();
    let admitted = false;
    const waiting = start().then(() => (admitted = true));
    await new Promise((r) => setImmediate(r));
    expect(admitted).toBe(false);
    done[0]!();
    await waiting;
    expect(inFlight.size).toBe(2);
    const settled = inFlight.settled();
    done[1]!();
    done[2]!();
    await settled;
    expect(inFlight.size).toBe(0);
  });

  it('ends the job once the take is done, and gives the slot back at once when nothing was taken or the take failed', async () => {
    const inFlight = new InFlight(1);
    await inFlight.start(
      async () => null,
      () => Promise.reject(new Error('not sent')),
    );
    await expect(
      inFlight.start(
        () => Promise.reject(new Error('take failed')),
        async () => {},
      ),
    ).rejects.toThrow('take failed');
    let sent = false;
    await inFlight.start(
      async () => 'taken',
      async () => {
        sent = true;
      },
    );
    await inFlight.settled();
    expect({ sent, size: inFlight.size }).toEqual({ sent: true, size: 0 });
  });
});

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => rx?.close());

describe('rounds against the database (jobs run by hand)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true' });
    await pumpOf(t.runtime.deps).lock.acquire();
  });
  afterAll(async () => t?.close());

  /** Creates `n` deliveries to a new endpoint and hands them to the queue; returns the endpoint and the jobs. */
  async function queued(path: string, n: number) {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}${path}`);
    for (let i = 0; i < n; i++) await upsertContact(t, org.publicKey);
    await dispatchEvents(t.runtime.deps.db, t.clock.now());
    await sweepDeliveries(t.runtime.deps.db, t.runtime.deps.jobs, t.clock.now());
    const queuedJobs = await t.sql<{ data: DeliverJob }>(`select data from pgboss.job where name = ? and state = 'created'`, [
      DELIVER_QUEUE,
    ]);
    const refs = new Map(queuedJobs.flatMap((j) => j.data.attempts).map((r) => [r.deliveryId, r]));
    const deliveries = await deliveriesOf(t, endpoint.id);
    const ids = new Set(deliveries.map((d) => d.id));
    const bundles = queuedJobs.map((j) => j.data).filter((b) => b.attempts.some((a) => ids.has(a.deliveryId)));
    return { endpoint, jobs: deliveries.map((d) => refs.get(d.id)!), bundles };
  }

  it('sends an attempt once when two copies of its job land in the same take round', async () => {
    const { endpoint, jobs } = await queued('/twin', 1);
    const deliver = jobDefinitions(t.runtime.deps).find((j) => j.queue === DELIVER_QUEUE)!;
    await Promise.all([deliver.handle({ attempts: [jobs[0]!] }), deliver.handle({ attempts: [jobs[0]!] })]);
    await pumpOf(t.runtime.deps).active.settled();
    expect(rx.requests.filter((r) => r.url === '/twin')).toHaveLength(1);
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'succeeded', attempts: 1 });
  });

  it('bundles a sweep into jobs of 25 attempts and runs them, each attempt once', async () => {
    const { endpoint, bundles } = await queued('/bundled', 30);
    expect(bundles.map((b) => b.attempts.length).sort()).toEqual([25, 5]);
    const deliver = jobDefinitions(t.runtime.deps).find((j) => j.queue === DELIVER_QUEUE)!;
    expect(() => deliver.parse({ attempts: [] })).toThrow();
    await Promise.all(bundles.map((b) => deliver.handle(deliver.parse(b))));
    await pumpOf(t.runtime.deps).active.settled();
    expect(new Set(rx.requests.filter((r) => r.url === '/bundled').map((r) => r.headers['webhook-id'])).size).toBe(30);
    expect(rx.requests.filter((r) => r.url === '/bundled')).toHaveLength(30);
    expect((await deliveriesOf(t, endpoint.id)).every((d) => d.state === 'succeeded' && d.attempts === 1)).toBe(true);
  });

  it('records a round of mixed outcomes: each delivery by its own lease, a failure beside a success still counts', async () => {
    const { endpoint, jobs } = await queued('/mixed', 3);
    await t.sql('update webhook_endpoints set failure_count = 4 where id = ?', [endpoint.id]);
    const take = pumpOf(t.runtime.deps).attempts.take;
    const [ok, bad, stale] = await Promise.all(jobs.map((j) => take.push(j)));
    const startedAt = t.clock.now();
    const result = (outcome: 'succeeded' | 'failed', statusCode: number) => ({
      outcome,
      statusCode,
      responseBody: 'x\0y',
      responseHeaders: null,
      requestHeaders: null,
      durationMs: 12.4,
      error: outcome === 'failed' ? 'the receiver answered 500' : null,
    });
    // The middle draw: no jitter, the nominal 30 s.
    const deps = {
      jobs: t.runtime.deps.jobs,
      appUrl: t.runtime.deps.config.APP_URL,
      baseUrl: t.runtime.deps.config.BASE_URL,
      random: { next: () => 0.5 },
    };
    await recordAttempts(
      t.runtime.deps.db,
      deps,
      [
        { a: ok!, attemptId: crypto.randomUUID(), startedAt, result: result('succeeded', 200) },
        { a: bad!, attemptId: crypto.randomUUID(), startedAt, result: result('failed', 500) },
        // Its lease was handed out again meanwhile: logged (it reached the receiver), but the delivery is not its own.
        { a: { ...stale!, lease_token: crypto.randomUUID() }, attemptId: crypto.randomUUID(), startedAt, result: result('failed', 500) },
      ],
      t.clock.now(),
    );
    const byId = new Map((await deliveriesOf(t, endpoint.id)).map((d) => [d.id, d]));
    expect(byId.get(ok!.id)).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(byId.get(bad!.id)).toMatchObject({
      state: 'pending',
      attempts: 1,
      next_attempt_at: new Date(new Date(bad!.first_attempt_at).getTime() + 30_000),
    });
    expect(byId.get(stale!.id)).toMatchObject({ state: 'in_flight', attempts: 0 });
    // Reset by the success, then counted by the failure of the same round; the stale failure does not count.
    expect(await endpointRow(t, endpoint.id)).toMatchObject({ failure_count: 1, enabled: true });
    const log = await waitForLog(t, endpoint.id, 3);
    expect(log.map((l) => [l.delivery_id, l.outcome, l.response_body]).sort()).toEqual(
      [
        [ok!.id, 'succeeded', 'x\uFFFDy'],
        [bad!.id, 'failed', 'x\uFFFDy'],
        [stale!.id, 'failed', 'x\uFFFDy'],
      ].sort(),
    );
  });
});

describe('a running engine', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startDeliveringApp();
  });
  afterAll(async () => t?.close());

  it('does not hold later deliveries behind a slow receiver: the job ends at the take, the attempt runs on', async () => {
    const slowOrg = await t.newOrg();
    const fastOrg = await t.newOrg();
    const slow = await insertEndpoint(t, slowOrg.orgId, `${rx.origin}/slow`);
    const fast = await insertEndpoint(t, fastOrg.orgId, `${rx.origin}/fast`);
    let fastArrived!: () => void;
    const arrived = new Promise<void>((r) => (fastArrived = r));
    rx.respond((req, res) => {
      if (req.url === '/fast') {
        fastArrived();
        res.writeHead(200).end();
      } else void arrived.then(() => res.writeHead(200).end());
    });
    try {
      const before = rx.requests.length;
      await upsertContact(t, slowOrg.publicKey);
      await rx.waitFor(before + 1);
      // The slow receiver answers only once the fast one got its delivery: were the queue still holding the slow job
      // until its answer, the fast delivery would wait for the 10 s time-out and the slow attempt would fail.
      await upsertContact(t, fastOrg.publicKey);
      const [slowLog] = await waitForLog(t, slow.id, 1, 20_000);
      expect(slowLog).toMatchObject({ outcome: 'succeeded', status_code: 200 });
      expect((await waitForLog(t, fast.id, 1))[0]).toMatchObject({ outcome: 'succeeded' });
    } finally {
      rx.respond((_req, res) => void res.writeHead(200).end('ok'));
    }
  }, 30_000);
});
