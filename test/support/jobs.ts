import { setTimeout as sleep } from 'node:timers/promises';
import type { JobDefinition } from '#core/jobs/boss.ts';
import type { TestApp } from './app.ts';

export interface FinishedJob {
  id: string;
  state: 'completed' | 'failed' | 'cancelled';
  output: unknown;
}

/**
 * Waits until pg-boss has run the job to an end state and returns it. Workers poll every 2 s, so this watches the job
 * itself rather than the data it changes: the test then asserts the outcome once, exactly, with no guessing on time.
 */
export async function finishedJob(t: TestApp, queue: string, id: string, timeoutMs = 15_000): Promise<FinishedJob> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await t.runtime.boss.boss.getJobById(queue, id);
    if (!job) throw new Error(`job ${id} of ${queue} does not exist`);
    if (job.state === 'completed' || job.state === 'failed' || job.state === 'cancelled')
      return { id, state: job.state, output: job.output };
    if (Date.now() > deadline) throw new Error(`job ${id} of ${queue} is still ${job.state} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Ids of the jobs on `queue` whose payload contains `data` (jsonb containment), oldest first; `waiting`: not yet run. */
export async function queuedJobIds(t: TestApp, queue: string, data: object, opts: { waiting?: boolean } = {}): Promise<string[]> {
  const rows = await t.sql<{ id: string }>(
    `select id from pgboss.job where name = ? and data @> ?::jsonb${opts.waiting ? ` and state in ('created', 'retry')` : ''} order by created_on, id`,
    [queue, JSON.stringify(data)],
  );
  return rows.map((r) => r.id);
}

/**
 * Runs what is queued on the definition's queue now, the way a worker would (fetch, handle, complete or fail), for
 * tests about a handler that need not wait for a worker's poll. Returns the ids it ran; a handler error is rethrown.
 */
export async function runQueuedJobs(t: TestApp, def: JobDefinition): Promise<string[]> {
  const boss = t.runtime.boss.boss;
  const jobs = await boss.fetch(def.queue, { batchSize: 100 });
  for (const job of jobs) {
    try {
      await def.handle(def.parse(job.data));
    } catch (err) {
      await boss.fail(def.queue, job.id, { message: String(err) });
      throw err;
    }
    await boss.complete(def.queue, job.id);
  }
  return jobs.map((j) => j.id);
}
