/**
 * Every queue wakes its workers by NOTIFY when a job commits. A queue without it waits for a worker's next poll
 * (every 2 s), which is latency in production and a wall-clock wait in every test that runs a job on a worker.
 */
import { jobDefinitions } from '../../apps/server/src/jobs.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
