/**
 * A workflow step naming a record (issue 16, section 4): the pipeline of create_deal and the company of update_contact
 * must be the organization's own when the workflow is created or its steps changed, else 400 naming the step and the
 * field, nothing saved. Before, creation answered 201 and every run failed `not_found`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, rest, type TestOrg } from '../internal/contacts-support.ts';
import { BASE_URL, footprint } from './support.ts';

let t: TestApp;
let a: TestOrg;
let b: TestOrg;
let pipelineOfA: string;
let pipelineOfB: string;
beforeAll(async () => {
  t = await initTestApp({ BASE_URL });
  [a, b] = [await newTestOrg(t), await newTestOrg(t)];
  pipelineOfA = (await a.owner.pipelines.create.mutate({ name: 'Sales A', stages: ['New'] })).id;
  pipelineOfB = (await b.owner.pipelines.create.mutate({ name: 'Sales B', stages: ['New'] })).id;
  for (const [org, domain] of [
    [a, 'a-corp.example'],
    [b, 'b-corp.example'],
  ] as const) {
    expect((await call(t, 'POST', '/companies/upsert', { key: org.publicKey, body: { domain, name: domain } })).status).toBe(200);
  }
});
afterAll(async () => t?.close());

const task = { action: 'create_task', input: { title: 'Call' } };
const deal = (pipelineId: string) => ({ action: 'create_deal', input: { pipelineId } });
const company = (name: string) => ({ action: 'update_contact', input: { company: name } });

describe('records a workflow step names', () => {
  it("creating with another organization's pipeline or company, or ones that do not exist: 400 naming each step's field, nothing saved", async () => {
    const before = await footprint(t, a.orgId);
    const res = await rest(t, 'POST', '/workflows', a.ownerKey, {
      name: 'Foreign',
      steps: [
        task,
        deal(pipelineOfA),
        deal(pipelineOfB),
        company('b-corp.example'),
        deal(randomUUID()),
        company('https://www.nowhere.example/x'),
        company('localhost'),
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual({
      error: `Validation failed: steps.2.input.pipelineId: create_deal: pipelineId names no pipeline of this organization (${pipelineOfB})`,
      code: 'validation_failed',
      issues: [
        { path: 'steps.2.input.pipelineId', message: `create_deal: pipelineId names no pipeline of this organization (${pipelineOfB})` },
        { path: 'steps.3.input.company', message: 'update_contact: company names no company of this organization (b-corp.example)' },
        {
          path: 'steps.4.input.pipelineId',
          message: expect.stringMatching(/^create_deal: pipelineId names no pipeline of this organization/),
        },
        { path: 'steps.5.input.company', message: 'update_contact: company names no company of this organization (nowhere.example)' },
        { path: 'steps.6.input.company', message: 'update_contact: company must be a company domain, e.g. example.com' },
      ],
    });
    expect(await footprint(t, a.orgId)).toEqual(before);
  });

  it('changing the steps is checked the same way; the stored steps stay as they were', async () => {
    const wf = await a.owner.workflows.create.mutate({
      name: 'Own',
      steps: [deal(pipelineOfA), company('https://www.A-Corp.example/about')] as never,
    });
    const before = await footprint(t, a.orgId);
    const res = await rest(t, 'PATCH', `/workflows/${wf.id}`, a.ownerKey, { name: 'Changed', steps: [task, deal(pipelineOfB)] });
    expect(res).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', issues: [{ path: 'steps.1.input.pipelineId', message: expect.stringContaining(pipelineOfB) }] },
    });
    expect(res.body.issues).toHaveLength(1);
    expect(await rest(t, 'PATCH', `/workflows/${wf.id}`, a.ownerKey, { steps: [company('c-corp.example')] })).toMatchObject({
      status: 400,
      body: { issues: [{ path: 'steps.0.input.company' }] },
    });
    expect(await footprint(t, a.orgId)).toEqual(before);
    expect((await a.owner.workflows.get.query({ id: wf.id })).steps).toEqual([
      { action: 'create_deal', input: { pipelineId: pipelineOfA } },
      { action: 'update_contact', input: { company: 'https://www.A-Corp.example/about' } },
    ]);

    // The organization's own records are taken, and a change leaving the steps alone is not re-checked.
    const ok = await rest(t, 'PATCH', `/workflows/${wf.id}`, a.ownerKey, {
      steps: [deal(pipelineOfA.toUpperCase()), company('a-corp.example')],
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    await a.owner.pipelines.delete.mutate({ id: pipelineOfA });
    expect((await rest(t, 'PATCH', `/workflows/${wf.id}`, a.ownerKey, { name: 'Renamed' })).status).toBe(200);
  });
});
