/**
 * Every queue wakes its workers by NOTIFY when a job commits. A queue without it waits for a worker's next poll
 * (every 2 s), which is latency in production and a wall-clock wait in every test that runs a job on a worker.
 */
import { BossRuntime, type JobDefinition } from '#core/jobs/boss.ts';
import { jobQueue } from '#core/jobs/queue.ts';
import { z } from 'zod';
import { jobDefinitions } from '../../apps/server/src/jobs.ts';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

it('every queue the application runs is created with notify', async () => {
  const names = jobDefinitions(t.runtime.deps).map((d) => d.queue);
  const rows = await t.sql<{ name: string; notify: boolean }>('select name, notify from pgboss.queue where name = any(?) order by name', [
    names,
  ]);
  expect(rows).toEqual([...names].sort().map((name) => ({ name, notify: true })));
});

it("a queue an earlier deployment created with other options takes the code's options at the next start", async () => {
  const definition = (notify: boolean): JobDefinition => ({
    queue: 'options-drift',
    queueOptions: { notify, deleteAfterSeconds: notify ? 600 : 60 },
    handle: async () => {},
    parse: (d) => d as object,
  });
  const read = () =>
    t.sql<{ notify: boolean; deletion_seconds: number }>("select notify, deletion_seconds from pgboss.queue where name = 'options-drift'");
  for (const notify of [false, true]) {
    const boss = new BossRuntime(t.runtime.deps.config.DATABASE_URL!, t.runtime.deps.log);
    try {
      await boss.start([definition(notify)]);
    } finally {
      await boss.stop();
    }
    expect(await read()).toEqual([{ notify, deletion_seconds: notify ? 600 : 60 }]);
  }
});

it('a start whose queues already have the options in the code writes nothing to them', async () => {
  const names = jobDefinitions(t.runtime.deps).map((d) => d.queue);
  const stamps = () =>
    t.sql<{ name: string; updated: string }>(
      'select name, updated_on::text as updated from pgboss.queue where name = any(?) order by name',
      [names],
    );
  const before = await stamps();
  expect(before).toHaveLength(names.length);
  const boss = new BossRuntime(t.runtime.deps.config.DATABASE_URL!, t.runtime.deps.log);
  try {
    await boss.start(jobDefinitions(t.runtime.deps));
  } finally {
    await boss.stop();
  }
  expect(await stamps()).toEqual(before);
});

it('holds three connections at most for the queue, its pool of two and its LISTEN, with every worker fetching', async () => {
  await t.runtime.boss.work(jobDefinitions(t.runtime.jobDeps));
  const [{ n }] = (await t.sql<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'leadwire-jobs'",
  )) as [{ n: number }];
  // The workers' first fetches all start at once, and a pool keeps what it opened for a while after.
  expect(n).toBeGreaterThanOrEqual(2);
  expect(n).toBeLessThanOrEqual(3);
});

it("wake has this process's workers of a queue fetch at once, where they would sleep until their next poll", async () => {
  const probe = jobQueue('wake-probe', z.object({}));
  const definition: JobDefinition = { queue: probe.name, queueOptions: { notify: true }, handle: async () => {}, parse: probe.parse };
  const boss = new BossRuntime(t.runtime.deps.config.DATABASE_URL!, t.runtime.deps.log);
  const lastFetch = () => boss.boss.getWipData().find((w) => w.name === probe.name)?.lastFetchedOn;
  try {
    await boss.start([definition]);
    await boss.work([definition]);
    // The worker's first fetch, at start; it found nothing and sleeps for a notify queue's poll, a minute.
    await vi.waitFor(() => expect(lastFetch()).toBeTypeOf('number'), { timeout: 10_000 });
    const first = lastFetch();
    // Nothing was sent, so no NOTIFY: only the wake can make it look again.
    boss.wake(probe);
    await vi.waitFor(() => expect(lastFetch()).toBeGreaterThan(first!), { timeout: 10_000 });
  } finally {
    await boss.stop();
  }
});
