/**
 * Issue 19: the request id reaches the jobs a public intake queues and what they do. A workflow intake and a form
 * submission sent with `X-Request-Id`: the job carries it, the worker's lines about the job carry it as `reqId`, and the
 * events the request and its job write keep it (so their deliveries show it).
 */
import { workflowRunJob } from '#core/workflows/job.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { waiter } from '../support/waiter.ts';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { newForm, submitJson } from '../forms/support.ts';
import { BASE_URL, finishedRun, postIntake } from './support.ts';

let t: TestApp;
let a: TestOrg;
const output: string[] = [];
const written = waiter();
beforeAll(async () => {
  const runtimeLogStream = { write: (line: string) => void (output.push(line), written.wake()) };
  t = await initTestApp({ BASE_URL, LOG_LEVEL: 'debug' }, { runtimeLogStream });
  await t.runtime.boss.work([workflowRunJob(t.runtime.deps)]);
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

const lines = () => output.map((l) => JSON.parse(l) as Record<string, unknown>);

it("a workflow intake's run job carries the request's id into its data, its worker lines and the events it writes", async () => {
  const wf = await a.owner.workflows.create.mutate({ name: 'Tag it', steps: [{ action: 'add_tag', input: { tags: 'traced' } }] });
  const requestId = 'zapier-run:8812';
  const res = await postIntake(t, wf.intakeUrl, { email: `traced-${Date.now()}@example.com` }, { 'x-request-id': requestId });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const runId = res.body.runId as string;
  const [job] = await t.sql<{ data: Record<string, unknown> }>(
    `select data from pgboss.job where name = 'workflows.run' and data->>'runId' = ?`,
    [runId],
  );
  expect(job?.data).toEqual({ runId, requestId });

  await finishedRun(t, runId);
  await written.until(
    () => lines().some((l) => l.msg === 'job done' && l.queue === 'workflows.run' && l.reqId === requestId),
    () => `no "job done" line for ${requestId}:\n${output.join('')}`,
    10_000,
  );
  // contact.created by the intake itself, contact.updated (the tag) by the job: both of this request.
  const events = await t.sql<{ event: string; request_id: string | null }>(
    `select event, request_id from outbox_events where organization_id = ? and payload->'data'->'contact'->>'id' = ? order by seq`,
    [a.orgId, res.body.contactId],
  );
  expect(events.length).toBeGreaterThanOrEqual(2);
  expect(events.map((e) => e.request_id)).toEqual(events.map(() => requestId));
});

it("a form submission's event keeps the request's id; a request without one gets the id the server made", async () => {
  const form = await newForm(a.member, {
    fields: [{ id: 'email', label: 'Email', type: 'email', required: true }],
  });
  const requestId = 'browser-7f3a';
  const sent = await submitJson(t, form.id, { email: `form-${Date.now()}@example.com` }, { 'x-request-id': requestId });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  const made = await submitJson(t, form.id, { email: `form2-${Date.now()}@example.com` });
  expect(made.status).toBe(200);
  const events = await t.sql<{ request_id: string | null }>(
    `select request_id from outbox_events where organization_id = ? and event = 'form.submitted' order by seq`,
    [a.orgId],
  );
  expect(events.map((e) => e.request_id)).toEqual([requestId, made.headers.get('x-request-id')]);
});

it('events and jobs written outside any request carry none', async () => {
  const { withRequestId } = await import('#core/http/request-scope.ts');
  const { emitEvents } = await import('#core/events/outbox.ts');
  await withRequestId(undefined, () =>
    emitEvents(t.runtime.deps.db, [{ orgId: a.orgId, event: 'ping', source: null, data: { message: 'x' }, at: t.clock.now() }]),
  );
  const [row] = await t.sql<{ request_id: string | null }>(
    `select request_id from outbox_events where organization_id = ? and event = 'ping'`,
    [a.orgId],
  );
  expect(row).toEqual({ request_id: null });
});
