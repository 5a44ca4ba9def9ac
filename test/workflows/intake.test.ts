/**
 * Workflow intake (spec "Other intake rules" 2): a JSON POST to the workflow's URL with an email or contactId records
 * a run on that contact and its steps run as a job through the automation actions, each outcome recorded, every change
 * emitted with source `automation`. Refusals are clear and save nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkflow, workflowRunJob } from '#core/workflows/job.ts';
import { initTestApp, type TestApp } from '../support/app.ts';
import { eventsOf, newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { BASE_URL, finishedRun, footprint, postIntake } from './support.ts';

let t: TestApp;
let a: TestOrg;
let pipelineId: string;
beforeAll(async () => {
  t = await initTestApp({ BASE_URL });
  // Test apps run no workers of their own: this file's runs are taken by the real worker, as in ROLE=all or worker.
  await t.runtime.boss.work([workflowRunJob(t.runtime.deps)]);
  a = await newTestOrg(t);
  [{ id: pipelineId }] = (await t.sql<{ id: string }>(`select id from pipelines where organization_id = ? and is_default`, [a.orgId])) as [
    { id: string },
  ];
});
afterAll(async () => t?.close());

const EVERY_ACTION = () => ({
  name: 'Webinar sign-ups',
  steps: [
    { action: 'add_tag' as const, input: { tags: 'webinar, vip' } },
    { action: 'create_task' as const, input: { title: 'Call after the webinar' } },
    { action: 'create_deal' as const, input: { pipelineId } },
    { action: 'update_contact' as const, input: { firstName: 'Ada', phone: '+1 415 555 0123' } },
    { action: 'send_sms' as const, input: { body: 'Thanks for signing up!' } },
  ],
});

async function contactWithConsent(org: TestOrg, email: string) {
  const c = await org.owner.contacts.create.mutate({ email, firstName: 'Grace', phone: '+14155550199', smsConsent: true });
  return c.id;
}

describe('the intake', () => {
  it('an unknown email creates the contact (source automation), answers 202, and the job runs every step; without SMS consent only send_sms fails', async () => {
    const wf = await a.owner.workflows.create.mutate(EVERY_ACTION());
    const res = await postIntake(t, wf.intakeUrl, { email: ' Ada@Example.com ', webinar: 'Pipelines 101', answers: { size: 12 } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({ runId: expect.any(String), status: 'queued', contactId: expect.any(String), contactCreated: true });
    const contactId = res.body.contactId as string;

    const run = await finishedRun(t, res.body.runId);
    expect(run).toMatchObject({
      status: 'completed_with_errors',
      contact_id: contactId,
      workflow_id: wf.id,
      finished_at: expect.any(String),
    });
    expect(run.payload).toEqual({ email: 'ada@example.com', webinar: 'Pipelines 101', answers: { size: 12 } });
    expect(run.steps.map((s) => [s.action, s.outcome?.status])).toEqual([
      ['add_tag', 'ok'],
      ['create_task', 'ok'],
      ['create_deal', 'ok'],
      ['update_contact', 'ok'],
      ['send_sms', 'error'],
    ]);
    expect(run.steps[4]!.outcome).toMatchObject({ code: 'sms_consent_required', message: expect.stringMatching(/consent/i) });

    const [contact] = await t.sql<Record<string, any>>(`select email, source, tags, first_name, phone from contacts where id = ?`, [
      contactId,
    ]);
    expect(contact).toEqual({
      email: 'ada@example.com',
      source: 'automation',
      tags: ['webinar', 'vip'],
      first_name: 'Ada',
      phone: '+1 415 555 0123',
    });
    const [task] = await t.sql(`select id, title, contact_id from tasks where organization_id = ?`, [a.orgId]);
    expect(task).toEqual({ id: run.steps[1]!.outcome!.recordId, title: 'Call after the webinar', contact_id: contactId });
    const [deal] = await t.sql(`select id, pipeline_id, contact_id from deals where organization_id = ?`, [a.orgId]);
    expect(deal).toEqual({ id: run.steps[2]!.outcome!.recordId, pipeline_id: pipelineId, contact_id: contactId });
    expect(await t.sql(`select id from messages where contact_id = ?`, [contactId])).toEqual([]);

    // Every change the intake and the steps made says it came from automation.
    const events = await eventsOf(t, a.orgId);
    expect(events[0]).toMatchObject({
      event: 'contact.created',
      source: 'automation',
      data: { contact: { id: contactId, source: 'automation' } },
    });
    expect(events.filter((e) => e.event === 'contact.tag_added').map((e) => e.data.tag)).toEqual(['webinar', 'vip']);
    expect(new Set(events.map((e) => e.event))).toEqual(
      new Set(['contact.created', 'contact.updated', 'contact.score_changed', 'contact.tag_added', 'task.created', 'deal.created']),
    );
    expect(events.every((e) => e.source === 'automation')).toBe(true);

    // The contact's timeline lists the run.
    const timeline = await a.member.contacts.timeline.query({ id: contactId, limit: 50 });
    expect(timeline.items.find((i) => i.kind === 'workflow_run')).toEqual({
      kind: 'workflow_run',
      id: res.body.runId,
      at: expect.any(String),
      workflowId: wf.id,
      workflowName: 'Webinar sign-ups',
      status: 'completed_with_errors',
      steps: [
        { action: 'add_tag', outcome: 'ok' },
        { action: 'create_task', outcome: 'ok' },
        { action: 'create_deal', outcome: 'ok' },
        { action: 'update_contact', outcome: 'ok' },
        { action: 'send_sms', outcome: 'error' },
      ],
      finishedAt: expect.any(String),
    });
    // And the run reads back through the API.
    const view = await a.member.workflows.run.query({ runId: res.body.runId });
    expect(view).toMatchObject({ id: res.body.runId, workflowId: wf.id, contactId, status: 'completed_with_errors' });
    expect((await a.member.workflows.runs.query({ id: wf.id, limit: 10 })).items.map((r) => r.id)).toEqual([res.body.runId]);
  });

  it('a contactId runs the steps on that contact; with consent every step succeeds and the text is sent (message.sent, automation)', async () => {
    const org = await newTestOrg(t);
    const [{ id: pipeline }] = (await t.sql<{ id: string }>(`select id from pipelines where organization_id = ? and is_default`, [
      org.orgId,
    ])) as [{ id: string }];
    const wf = await org.admin.workflows.create.mutate({
      ...EVERY_ACTION(),
      steps: EVERY_ACTION().steps.map((s) => (s.action === 'create_deal' ? { ...s, input: { pipelineId: pipeline } } : s)),
    });
    const contactId = await contactWithConsent(org, 'grace@example.com');
    const before = (await eventsOf(t, org.orgId)).length;

    const res = await postIntake(t, wf.intakeUrl, { contactId, email: 'someone-else@example.com' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ contactId, contactCreated: false });
    const run = await finishedRun(t, res.body.runId);
    expect(run.status).toBe('completed');
    expect(run.steps.every((s) => s.outcome?.status === 'ok')).toBe(true);
    expect(await t.sql(`select count(*)::int as n from contacts where organization_id = ?`, [org.orgId])).toEqual([{ n: 1 }]);
    const [message] = await t.sql(`select id, body, status from messages where contact_id = ?`, [contactId]);
    expect(message).toEqual({ id: run.steps[4]!.outcome!.recordId, body: 'Thanks for signing up!', status: 'sent' });
    const events = (await eventsOf(t, org.orgId)).slice(before);
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['contact.tag_added', 'task.created', 'deal.created', 'contact.updated', 'message.sent']),
    );
    expect(events.every((e) => e.source === 'automation')).toBe(true);
  });

  it('an existing email matches its contact, creating nothing', async () => {
    const org = await newTestOrg(t);
    const wf = await org.owner.workflows.create.mutate({ name: 'Task', steps: [{ action: 'create_task', input: { title: 'Follow up' } }] });
    const contactId = await contactWithConsent(org, 'grace@example.com');
    const res = await postIntake(t, wf.intakeUrl, { email: 'GRACE@example.com' });
    expect(res).toMatchObject({ status: 202, body: { contactId, contactCreated: false } });
    expect((await finishedRun(t, res.body.runId)).status).toBe('completed');
    expect(await t.sql(`select count(*)::int as n from contacts where organization_id = ?`, [org.orgId])).toEqual([{ n: 1 }]);
  });

  it('refuses a body with neither email nor contactId (400 missing_identity), unknown and disabled URLs (404), bad bodies (400, 413), saving nothing', async () => {
    const org = await newTestOrg(t);
    const wf = await org.owner.workflows.create.mutate({ name: 'Task', steps: [{ action: 'create_task', input: { title: 'Follow up' } }] });
    const off = await org.owner.workflows.create.mutate({
      name: 'Off',
      enabled: false,
      steps: [{ action: 'create_task', input: { title: 'x' } }],
    });
    const before = await footprint(t, org.orgId);
    const neither = await postIntake(t, wf.intakeUrl, { firstName: 'Ada', email: '', contactId: null });
    expect(neither).toMatchObject({
      status: 400,
      body: { code: 'missing_identity', error: 'The body needs an email or a contactId: the contact this workflow run is for' },
    });
    expect(await postIntake(t, wf.intakeUrl, {})).toMatchObject({ status: 400, body: { code: 'missing_identity' } });

    const unknown = `${BASE_URL}/workflows/hooks/wfh_${'A'.repeat(43)}`;
    for (const url of [unknown, `${BASE_URL}/workflows/hooks/not-a-token`, off.intakeUrl]) {
      expect(await postIntake(t, url, { email: 'ada@example.com' }), url).toMatchObject({
        status: 404,
        body: { code: 'not_found', error: 'No enabled workflow has this intake URL' },
      });
    }
    expect(await postIntake(t, wf.intakeUrl, '{"email": "ada@')).toMatchObject({ status: 400, body: { code: 'malformed_json' } });
    expect(await postIntake(t, wf.intakeUrl, { email: 'not-an-email' })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', issues: [{ path: 'email' }] },
    });
    expect(await postIntake(t, wf.intakeUrl, { contactId: 'blue' })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', issues: [{ path: 'contactId' }] },
    });
    expect(await postIntake(t, wf.intakeUrl, { contactId: '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10' })).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect(await postIntake(t, wf.intakeUrl, JSON.parse('{"email":"ada@example.com","extra":{"__proto__":{"x":1}}}'))).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', issues: [{ path: 'extra.__proto__' }] },
    });
    // Not an object: said so, rather than read as a body without an email (missing_identity).
    for (const [body, kind] of [
      ['["ada@example.com"]', 'an array'],
      ['"ada@example.com"', 'a string'],
      ['42', 'a number'],
      ['null', 'null'],
    ]) {
      expect(await postIntake(t, wf.intakeUrl, body!)).toMatchObject({
        status: 400,
        body: {
          code: 'validation_failed',
          error: `Validation failed: the body must be a JSON object, not ${kind}`,
          issues: [{ path: '', message: `must be a JSON object, not ${kind}` }],
        },
      });
    }
    expect(await postIntake(t, wf.intakeUrl, { email: 'ada@example.com', blob: 'x'.repeat(1_100_000) })).toMatchObject({
      status: 413,
      body: { code: 'payload_too_large' },
    });
    expect(await footprint(t, org.orgId)).toEqual(before);
  });

  it('limits each workflow to 60 runs a minute (429 with retry-after, nothing saved), counted per workflow, reopening next minute', async () => {
    const org = await newTestOrg(t);
    const wf = await org.owner.workflows.create.mutate({ name: 'Busy', steps: [{ action: 'create_task', input: { title: 'x' } }] });
    const other = await org.owner.workflows.create.mutate({ name: 'Quiet', steps: [{ action: 'create_task', input: { title: 'y' } }] });
    const contactId = await contactWithConsent(org, 'grace@example.com');
    const minute = new Date(Math.ceil(t.clock.now().getTime() / 60_000) * 60_000 + 60_000);
    t.clock.freeze(minute);
    try {
      // 59 runs counted already this minute; the 60th passes, the 61st does not.
      await t.sql(`insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 59)`, [`workflow:${wf.id}`, minute]);
      const last = await postIntake(t, wf.intakeUrl, { contactId });
      expect(last.status).toBe(202);
      expect(last.headers.get('x-ratelimit-limit')).toBe('60');
      expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
      await finishedRun(t, last.body.runId);
      const before = await footprint(t, org.orgId);
      const refused = await postIntake(t, wf.intakeUrl, { contactId });
      expect(refused).toMatchObject({ status: 429, body: { code: 'rate_limited' } });
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(await footprint(t, org.orgId)).toEqual(before);
      // Another workflow of the same organization has its own allowance.
      expect((await postIntake(t, other.intakeUrl, { contactId })).status).toBe(202);
      t.clock.advance(60_000);
      expect((await postIntake(t, wf.intakeUrl, { contactId })).status).toBe(202);
    } finally {
      t.clock.unfreeze();
    }
  });

  it('a run keeps the steps it was recorded with, and stays on the timeline after its workflow is deleted', async () => {
    const org = await newTestOrg(t);
    const wf = await org.owner.workflows.create.mutate({ name: 'Short-lived', steps: [{ action: 'add_tag', input: { tags: ['first'] } }] });
    const res = await postIntake(t, wf.intakeUrl, { email: 'lin@example.com' });
    await org.owner.workflows.update.mutate({ id: wf.id, steps: [{ action: 'add_tag', input: { tags: ['second'] } }] });
    const run = await finishedRun(t, res.body.runId);
    expect(run.steps).toMatchObject([{ action: 'add_tag', input: { tags: ['first'] }, outcome: { status: 'ok' } }]);
    await org.owner.workflows.delete.mutate({ id: wf.id });
    const timeline = await org.owner.contacts.timeline.query({ id: res.body.contactId, limit: 50 });
    expect(timeline.items.find((i) => i.kind === 'workflow_run')).toMatchObject({
      workflowId: null,
      workflowName: 'Short-lived',
      status: 'completed',
    });
  });

  it('a retried job goes on from the first step without an outcome, never running a recorded step again', async () => {
    const org = await newTestOrg(t);
    const contactId = await contactWithConsent(org, 'grace@example.com');
    const steps = [
      {
        action: 'add_tag',
        input: { tags: ['done-before'] },
        outcome: { status: 'ok', recordId: contactId, at: '2026-11-22T10:00:00.000Z' },
      },
      { action: 'create_task', input: { title: 'Still to do' }, outcome: null },
    ];
    // As a job that died after its first step left it.
    const [run] = await t.sql<{ id: string }>(
      `insert into workflow_runs (organization_id, contact_id, workflow, status, steps) values (?, ?, 'Half done', 'running', ?::jsonb) returning id`,
      [org.orgId, contactId, JSON.stringify(steps)],
    );
    await runWorkflow(t.runtime.deps, run!.id);
    const done = await finishedRun(t, run!.id);
    expect(done.status).toBe('completed');
    expect(done.steps[0]!.outcome).toEqual(steps[0]!.outcome);
    expect(done.steps[1]!.outcome).toMatchObject({ status: 'ok' });
    expect(await t.sql(`select tags from contacts where id = ?`, [contactId])).toEqual([{ tags: [] }]);
    expect(await t.sql(`select title from tasks where contact_id = ?`, [contactId])).toEqual([{ title: 'Still to do' }]);
    // A finished run is left alone.
    await runWorkflow(t.runtime.deps, run!.id);
    expect(await t.sql(`select count(*)::int as n from tasks where contact_id = ?`, [contactId])).toEqual([{ n: 1 }]);
  });
});
