import { setTimeout as sleep } from 'node:timers/promises';
import { answerOf, type TestApp } from '../support/app.ts';

export const BASE_URL = 'https://api.leadwire.test/api';

/** A POST to an intake URL as another system sends it: no key, JSON (or the bytes given). */
export async function postIntake(t: TestApp, url: string, body: unknown, headers: Record<string, string> = {}) {
  const path = url.startsWith(BASE_URL) ? url.slice(BASE_URL.length) : url;
  const res = await fetch(`${t.origin}/api${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return answerOf(res);
}

export interface StoredRun {
  id: string;
  status: string;
  contact_id: string;
  workflow_id: string | null;
  steps: {
    action: string;
    input: Record<string, unknown>;
    outcome: null | { status: string; code?: string; message?: string; recordId?: string };
  }[];
  payload: Record<string, unknown>;
  finished_at: string | null;
}

/**
 * Waits until the run's job has finished it (its status in the database), then returns the row. The worker wakes on
 * NOTIFY; this watches the run itself, so the test asserts the outcome once, with no guess about timing.
 */
export async function finishedRun(t: TestApp, runId: string, timeoutMs = 15_000): Promise<StoredRun> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [run] = await t.sql<StoredRun>(
      `select id, status, contact_id, workflow_id, steps, payload, finished_at from workflow_runs where id = ?`,
      [runId],
    );
    if (!run) throw new Error(`run ${runId} does not exist`);
    if (run.status === 'completed' || run.status === 'completed_with_errors') return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run.status} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Every table a workflow or its intake writes, counted: a refusal must leave all of them as they were. */
export async function footprint(t: TestApp, orgId: string) {
  const [row] = await t.sql<Record<string, string>>(
    `select (select count(*) from workflows where organization_id = $1) as workflows,
       (select count(*) from workflow_runs where organization_id = $1) as runs,
       (select count(*) from contacts where organization_id = $1) as contacts,
       (select count(*) from outbox_events where organization_id = $1) as events,
       (select count(*) from pgboss.job where name = 'workflows.run') as jobs,
       (select string_agg(updated_at::text, ',' order by id) from workflows where organization_id = $1) as versions`.replaceAll('$1', '?'),
    Array(5).fill(orgId),
  );
  return row;
}
