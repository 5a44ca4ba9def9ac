/**
 * Issue 19 section 2: two `ROLE=api` and two `ROLE=worker` processes of the real entry point on one PostgreSQL. A key's
 * per-minute limit is one count across the API processes; a revocation through one is seen by the other on its next
 * request; the scheduled cleanup and purge run once across all four; every webhook delivery reaches its receiver with
 * one worker SIGKILLed mid-run, and only attempts that were in flight at the kill may come twice (docs/webhooks.md,
 * "At least once").
 */
import { hashKey } from '@leadwire/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { killLeftovers, logLines, type ServerProcess, sleep, startServer, sendWithKey } from '../support/process.ts';
import { type Receiver, startReceiver, TEST_CA_PATH } from '../support/receiver.ts';
import { PUBLIC_API_PER_MINUTE } from '#core/limits/plans.ts';
import { CLEANUP_QUEUE } from '#core/jobs/cleanup.ts';
import { PURGE_CONTACTS_QUEUE } from '#core/contacts/app/purge-job.ts';
import { MAX_IN_FLIGHT } from '#core/webhooks/delivery/deliver.ts';

let t: TestApp;
let rx: Receiver;
let apis: ServerProcess[] = [];
let workers: ServerProcess[] = [];
/** The receiver's answers wait for this; shut, every attempt sent stays in flight. */
let gate: Promise<void> = Promise.resolve();

beforeAll(async () => {
  t = await initTestApp();
  // Every answer is a 200, a little slow, and held while `gate` is shut (see the SIGKILL test).
  rx = await startReceiver({
    responder: async (_req, res) => {
      await gate;
      setTimeout(() => res.writeHead(200).end('ok'), 40);
    },
  });
  const env = {
    DATABASE_URL: t.runtime.deps.config.DATABASE_URL!,
    WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true',
    NODE_EXTRA_CA_CERTS: TEST_CA_PATH,
    // The pumps are woken by the api processes' writes; their backstop poll is what notices a SIGKILLed worker's
    // attempts (nothing announces a death), so it is short here, as the lease would otherwise be the bound (30 s).
    WEBHOOK_PUMP_INTERVAL_MS: '50',
    V1_REFUSAL_DELAY_MS: '0',
    // pg-boss's schedule pass every second instead of every 30 s: a polling cadence, not a wait for a tick.
    JOBS_CRON_INTERVAL_S: '1',
  };
  const started = await Promise.all([
    ...[0, 1].map(() => startServer({ ...env, ROLE: 'api', LOG_LEVEL: 'warn' })),
    ...[0, 1].map(() => startServer({ ...env, ROLE: 'worker' })),
  ]);
  apis = started.slice(0, 2);
  workers = started.slice(2);
  // Four processes booting at once on a shared 2-core machine: more than the usual 60 s allowed.
  await Promise.all([...apis.map((a) => a.waitReady(120_000)), ...workers.map((w) => w.waitForOutput(/"msg":"leadwire ready"/, 120_000))]);
}, 240_000);

afterAll(async () => {
  await Promise.all([...apis, ...workers].map((p) => p.stop()));
  await killLeftovers();
  await rx?.close();
  await t?.close();
});

const search = (p: ServerProcess, key: string) => sendWithKey(p.origin, 'GET', '/v1/contacts/search?email=nobody@example.com', key);

/** Polls until `check` answers something other than undefined, or fails after `timeoutMs`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`not ${what} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

const minute = () => Math.floor(Date.now() / 60_000);

describe('2 API and 2 worker processes on one PostgreSQL', { timeout: 180_000 }, () => {
  it("counts a key's per-minute limit once across the API processes", async () => {
    const org = await t.newOrg();
    // The processes count in the system clock's minute: a run that a minute boundary cuts in two counts in two windows,
    // so it is done again with a fresh key (it takes a second or two; a second boundary cannot follow within a minute).
    for (let run = 0; run < 2; run++) {
      const key = await t.newKey({
        orgId: org.orgId,
        userId: org.userId,
        name: `limit ${run}`,
        type: 'public',
        permissions: ['contacts:read'],
      });
      const at = minute();
      const answers: Awaited<ReturnType<typeof search>>[] = [];
      let next = 0;
      // Eight requests at a time, alternating: request i goes to API process i % 2.
      const lane = async () => {
        for (let i = next++; i < PUBLIC_API_PER_MINUTE; i = next++) answers.push(await search(apis[i % 2]!, key));
      };
      await Promise.all(Array.from({ length: 8 }, lane));
      const over = [await search(apis[0]!, key), await search(apis[1]!, key)];
      if (minute() !== at) continue;

      expect(answers.filter((a) => a.status !== 404)).toEqual([]);
      // One counter: every request saw its own count, none the same as another's.
      const remaining = answers.map((a) => Number(a.remaining)).sort((x, y) => x - y);
      expect(remaining).toEqual(Array.from({ length: PUBLIC_API_PER_MINUTE }, (_, i) => i));
      expect(over.map((a) => [a.status, a.body.code])).toEqual([
        [429, 'rate_limited'],
        [429, 'rate_limited'],
      ]);
      return;
    }
    throw new Error('two runs in a row were cut by a minute boundary');
  });

  it('a key revoked through one API process is refused by the other on its next request', async () => {
    const org = await t.newOrg();
    const [a, b] = apis as [ServerProcess, ServerProcess];
    for (const [through, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const key = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'revoked', type: 'public', permissions: ['contacts:read'] });
      expect([(await search(through, key)).status, (await search(other, key)).status]).toEqual([404, 404]);
      const [row] = await t.sql<{ id: string }>('select id from api_keys where key_hash = ?', [hashKey(key)]);
      const revoked = await sendWithKey(through.origin, 'POST', `/api-keys/${row!.id}/revoke`, org.internalKey);
      expect(revoked.status, JSON.stringify(revoked.body)).toBeLessThan(300);
      const next = await search(other, key);
      expect([next.status, next.body.code]).toEqual([401, 'unauthorized']);
      expect((await search(through, key)).status).toBe(401);
    }
  });

  // Bounds sized for the queue's poll: a job a schedule forwards may wait for its worker's backstop poll (60 s,
  // NOTIFY_QUEUE_POLL_S) when no NOTIFY announces it; they only end a run that is already failing.
  it('runs the hourly cleanup and the nightly purge once across all processes, a missed tick included', { timeout: 420_000 }, async () => {
    const queues = [CLEANUP_QUEUE, PURGE_CONTACTS_QUEUE];
    const done: Record<string, string> = { [CLEANUP_QUEUE]: 'maintenance cleanup done', [PURGE_CONTACTS_QUEUE]: 'trash purge done' };
    const schedules = await t.sql<{ name: string; missed: string }>(
      `select name, options->>'missed' as missed from pgboss.schedule where name = any(?) order by name`,
      [queues],
    );
    expect(schedules).toEqual(queues.toSorted().map((name) => ({ name, missed: 'once' })));
    const all = [...apis, ...workers];
    const mark = all.map((p) => p.stdout.length);
    // No process ran a pass for two days (as after an outage across the ticks): the next pass, by whichever process
    // claims it, owes each schedule its latest tick, once.
    // That premise includes the ticks already forwarded: the processes' first pass may have forwarded a latest tick (the
    // hourly cleanup's, when the file starts just after the hour), which the rule would rightly not owe again. They go
    // first, so no pass in between can forward it anew.
    await t.sql(`delete from pgboss.job where name = '__pgboss__send-it' and data->>'name' = any(?)`, [queues]);
    const [{ before }] = (await t.sql<{ before: Date }>(
      `with moved as (update pgboss.version set cron_on = now() - interval '2 days' returning 1)
       select now() as before from moved`,
    )) as [{ before: Date }];
    await t.sql(`update pgboss.schedule set created_on = now() - interval '2 days' where name = any(?)`, [queues]);

    const ran = (msg: string) => all.flatMap((p, i) => logLines(p.stdout.slice(mark[i])).filter((l) => l.msg === msg));
    await until('run', async () => (queues.every((q) => ran(done[q]!).length > 0) ? true : undefined), 180_000);
    // Two more passes after both ran (claimed by any process, one at a time): they owe nothing more.
    for (let pass = 0; pass < 2; pass++) {
      const [{ at }] = (await t.sql<{ at: Date }>('select cron_on as at from pgboss.version')) as [{ at: Date }];
      await until('claimed again', async () => {
        const [row] = await t.sql<{ later: boolean }>('select cron_on > ? as later from pgboss.version', [at]);
        return row?.later ? true : undefined;
      });
    }

    for (const queue of queues) {
      // Each tick the passes found became one forwarding job (pg-boss files it under the tick's minute) and one job
      // of the queue, run by one worker: as many "done" lines as jobs, across all four processes' logs.
      const forwarded = await t.sql<{ slot: string }>(
        `select data->>'slot' as slot from pgboss.job where name = '__pgboss__send-it' and data->>'name' = ? and created_on >= ?`,
        [queue, before],
      );
      const jobs = await t.sql<{ state: string; retry_count: number }>(
        'select state, retry_count from pgboss.job where name = ? and created_on >= ?',
        [queue, before],
      );
      expect(forwarded.length, queue).toBeGreaterThanOrEqual(1);
      expect(new Set(forwarded.map((f) => f.slot)).size, queue).toBe(forwarded.length);
      expect(jobs, queue).toEqual(forwarded.map(() => ({ state: 'completed', retry_count: 0 })));
      expect(ran(done[queue]!), queue).toHaveLength(jobs.length);
      // A tick falls on the hour (cleanup) or at 05:00 (purge): more than the missed one only if the test ran across one.
      if (new Date().getUTCMinutes() !== 0 && new Date(before).getUTCMinutes() !== 0) expect(jobs, queue).toHaveLength(1);
    }
  });

  it('sends every delivery with a worker SIGKILLed mid-run: nothing lost, a second copy only of what was in flight', {
    timeout: 240_000,
  }, async () => {
    const org = await t.newOrg();
    const created = await sendWithKey(apis[0]!.origin, 'POST', '/webhooks', org.internalKey, {
      url: `${rx.origin}/scale-out`,
      events: ['contact.created'],
    });
    expect([created.status, created.body.enabled]).toEqual([201, true]);
    // A missing worker lock is read as a dead worker only once the cluster has run longer than a send can last (sweep.ts).
    await until(
      'settled',
      async () => {
        const [row] = await t.sql<{ ok: boolean }>(`select pg_postmaster_start_time() < now() - interval '16 seconds' as ok`);
        return row?.ok ? true : undefined;
      },
      60_000,
    );

    // The receiver answers nothing until the kill: both workers then certainly hold attempts when one dies. (Answering
    // as they came, 400 deliveries could all be done between two polls of a busy machine, and the moment was missed.)
    let open = () => {};
    gate = new Promise((resolve) => (open = resolve));
    const N = 400;
    await Promise.all(
      [0, 1, 2, 3].map(async (b) => {
        const contacts = Array.from({ length: N / 4 }, (_, i) => ({ email: `c${b * 1000 + i}@scale.example` }));
        const r = await sendWithKey(apis[b % 2]!.origin, 'POST', '/v1/contacts/batch-upsert', org.publicKey, { contacts });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }),
    );
    const mine = () => rx.requests.filter((r) => r.url === '/scale-out');
    // Both workers hold attempts (two worker keys on in-flight deliveries), and some were answered already.
    await until('shared', async () => {
      const keys = await t.sql<{ n: number }>(
        `select count(distinct worker_key)::int as n from webhook_deliveries where endpoint_id = ? and state = 'in_flight'`,
        [created.body.id],
      );
      return keys[0]!.n === 2 && mine().length >= 40 ? true : undefined;
    }).catch((err: unknown) => {
      open();
      throw err;
    });
    const killing = Date.now();
    workers[0]!.child.kill('SIGKILL');
    const exited = await workers[0]!.exited;
    open();
    expect(exited).toEqual({ code: null, signal: 'SIGKILL' });
    // Bytes the dead worker wrote just before it died may still be read by the receiver a moment after its exit shows.
    const dead = Date.now() + 500;
    // A worker at its MAX_IN_FLIGHT fetches one more job and waits for room before taking its attempts, so the dead
    // worker may have died holding attempts it never took (no worker key: not orphaned, just queued). Those come back
    // when their queue lease ends (QUEUE_LEASE_MS, a minute of the spawned processes' wall clock, which a test cannot
    // move): that is what this does, on the rows, so the one worker left sends them now instead of a minute later.
    // Attempts the living worker took keep their key and are untouched; one it was about to take is handed out again
    // with a new lease token, and its old job drops it as stale.
    const released = await t.sql(
      `update webhook_deliveries set next_attempt_at = ? where endpoint_id = ? and state = 'in_flight' and worker_key is null returning id`,
      [new Date(), created.body.id],
    );

    const deliveries = await until(
      'delivered',
      async () => {
        const rows = await t.sql<{ id: string; state: string }>('select id, state from webhook_deliveries where endpoint_id = ?', [
          created.body.id,
        ]);
        return rows.length === N && rows.every((r) => r.state === 'succeeded') ? rows : undefined;
      },
      // One worker left sends the rest; on a machine busy with the whole suite that took over 30 s once.
      120_000,
    );
    const copies = new Map<string, number[]>();
    for (const r of mine()) copies.set(String(r.headers['webhook-id']), [...(copies.get(String(r.headers['webhook-id'])) ?? []), r.at]);
    expect([...copies.keys()].sort()).toEqual(deliveries.map((d) => d.id).sort());
    // A second copy is the documented one: the first was out when its worker died, the second came after the kill.
    const twice = [...copies].filter(([, at]) => at.length > 1);
    expect(
      twice.filter(([, at]) => at.length > 2 || at[0]! > dead || at[1]! < killing),
      'copies outside the kill',
    ).toEqual([]);
    expect(twice.length).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    console.info(
      `scale-out: ${N} deliveries, ${mine().length} requests, ${twice.length} sent again after the kill, ${released.length} queued ones released`,
    );
  });
});
