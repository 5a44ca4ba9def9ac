/**
 * Workflows in the application (intake rule 2): CRUD over REST and typed tRPC, roles, step inputs checked by the
 * automation actions' own schemas at creation, the intake URL's token stored hashed and rotated.
 */
import { hashKey } from '#core/auth/key-material.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, refusal, rest, type TestOrg } from '../internal/contacts-support.ts';
import { BASE_URL, footprint, postIntake } from './support.ts';

let t: TestApp;
let a: TestOrg;
beforeAll(async () => {
  t = await initTestApp({ BASE_URL });
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

const TAG_AND_TASK = {
  name: 'Webinar sign-ups',
  trigger: 'webhook_received' as const,
  steps: [
    { action: 'add_tag' as const, input: { tags: ' webinar, vip ,' } },
    { action: 'create_task' as const, input: { title: '  Call after the webinar ' } },
  ],
};

describe('workflows in the application', () => {
  it('POST /api/workflows answers 201 with the id and the intake URL, shown once; only its hash is stored', async () => {
    const res = await fetch(`${t.origin}/api/workflows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(TAG_AND_TASK),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    expect(body).toEqual({
      id: expect.any(String),
      name: 'Webinar sign-ups',
      trigger: 'webhook_received',
      // Stored as they will run: trimmed, tags split.
      steps: [
        { action: 'add_tag', input: { tags: ['webinar', 'vip'] } },
        { action: 'create_task', input: { title: 'Call after the webinar' } },
      ],
      enabled: true,
      intakeUrl: expect.stringMatching(new RegExp(`^${BASE_URL}/workflows/hooks/wfh_[0-9A-Za-z]{43}$`)),
      intakeUrlHint: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const token = body.intakeUrl.split('/').at(-1);
    expect(body.intakeUrlHint).toBe(`${BASE_URL}/workflows/hooks/${token.slice(0, 10)}…`);
    const [row] = await t.sql<Record<string, unknown>>(`select * from workflows where id = ?`, [body.id]);
    expect(row).toMatchObject({ token_hash: hashKey(token), token_prefix: token.slice(0, 10), created_by_id: a.ownerId });
    expect(JSON.stringify(row)).not.toContain(token);

    // Reading it back never shows the token again.
    const got = await rest(t, 'GET', `/workflows/${body.id}`, a.memberKey);
    const list = await rest(t, 'GET', '/workflows', a.memberKey);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...body, intakeUrl: undefined, updatedAt: got.body.updatedAt });
    expect(list.body.items.map((w: { id: string }) => w.id)).toContain(body.id);
    for (const answer of [got, list]) expect(JSON.stringify(answer.body)).not.toContain(token);
  });

  it('members read; creating, changing, rotating and deleting need the owner or admin role (403, nothing changed)', async () => {
    const org = await newTestOrg(t);
    const wf = await org.admin.workflows.create.mutate(TAG_AND_TASK);
    const before = await footprint(t, org.orgId);
    expect(await rest(t, 'POST', '/workflows', org.memberKey, TAG_AND_TASK)).toMatchObject({
      status: 403,
      body: { code: 'forbidden_role' },
    });
    expect(await refusal(org.member.workflows.update.mutate({ id: wf.id, enabled: false }))).toMatchObject({
      status: 403,
      code: 'forbidden_role',
    });
    expect(await refusal(org.member.workflows.rotateToken.mutate({ id: wf.id }))).toMatchObject({ status: 403, code: 'forbidden_role' });
    expect(await rest(t, 'DELETE', `/workflows/${wf.id}`, org.memberKey)).toMatchObject({ status: 403, body: { code: 'forbidden_role' } });
    expect(await footprint(t, org.orgId)).toEqual(before);
    expect((await org.member.workflows.get.query({ id: wf.id })).name).toBe('Webinar sign-ups');
    expect((await org.member.workflows.list.query({ limit: 10 })).items).toHaveLength(1);
  });

  it('updates (keeping what is left out), pages newest first, deletes (204, then 404); other organizations see nothing', async () => {
    const org = await newTestOrg(t);
    const first = await org.owner.workflows.create.mutate({ ...TAG_AND_TASK, name: 'First' });
    const second = await org.owner.workflows.create.mutate({ ...TAG_AND_TASK, name: 'Second', enabled: false });
    const page = await org.member.workflows.list.query({ limit: 1 });
    expect(page.items.map((w) => w.name)).toEqual(['Second']);
    expect((await org.member.workflows.list.query({ limit: 1, cursor: page.nextCursor! })).items.map((w) => w.name)).toEqual(['First']);

    const patched = await rest(t, 'PATCH', `/workflows/${second.id}`, org.ownerKey, {
      enabled: true,
      steps: [{ action: 'create_task', input: { title: 'Only this' } }],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Second',
      enabled: true,
      steps: [{ action: 'create_task', input: { title: 'Only this' } }],
    });
    expect(patched.body.intakeUrl).toBeUndefined();

    expect(await refusal(a.owner.workflows.get.query({ id: first.id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(a.owner.workflows.update.mutate({ id: first.id, name: 'Mine' }))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect(await refusal(a.owner.workflows.delete.mutate({ id: first.id }))).toMatchObject({ status: 404, code: 'not_found' });

    const del = await fetch(`${t.origin}/api/workflows/${first.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${org.ownerKey}` },
    });
    expect(del.status).toBe(204);
    expect(await refusal(org.owner.workflows.delete.mutate({ id: first.id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await postIntake(t, first.intakeUrl, { email: 'gone@example.com' })).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('refuses step inputs that fail their action schema, naming the step and the field, and saves nothing', async () => {
    const before = await footprint(t, a.orgId);
    const res = await rest(t, 'POST', '/workflows', a.ownerKey, {
      name: 'Broken',
      steps: [
        { action: 'create_task', input: { title: 'Fine' } },
        { action: 'add_tag', input: {} },
        { action: 'create_deal', input: { pipelineId: 'not-a-uuid' } },
        { action: 'send_sms', input: { to: '+14155550123', body: 'Hi' } },
        { action: 'update_contact', input: { phone: 42 } },
        { action: 'create_contact', input: { firstName: 'Ada', lastName: 'Lovelace' } },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.error).toMatch(/^Validation failed: steps\.1\.input\.tags: add_tag: tags is required$/);
    expect(res.body.issues).toEqual(
      expect.arrayContaining([
        { path: 'steps.1.input.tags', message: 'add_tag: tags is required' },
        { path: 'steps.2.input.pipelineId', message: 'create_deal: pipelineId must be a pipeline id (UUID)' },
        { path: 'steps.3.input.to', message: "to is the run's contact and cannot be set in a step (send_sms)" },
        { path: 'steps.4.input.phone', message: 'update_contact: phone must be text' },
        { path: 'steps.5.action', message: 'action must be one of: add_tag, create_task, create_deal, update_contact, send_sms' },
      ]),
    );
    for (const bad of [
      { name: 'No steps', steps: [] },
      { name: 'Wrong trigger', trigger: 'form_submitted', steps: TAG_AND_TASK.steps },
      { name: '', steps: TAG_AND_TASK.steps },
      { name: 'Proto', steps: [{ action: 'create_task', input: JSON.parse('{"title":"x","__proto__":{"a":1}}') }] },
      { name: 'Too many', steps: Array(21).fill(TAG_AND_TASK.steps[1]) },
    ]) {
      expect(await rest(t, 'POST', '/workflows', a.ownerKey, bad), JSON.stringify(bad).slice(0, 80)).toMatchObject({
        status: 400,
        body: { code: 'validation_failed' },
      });
    }
    const [id] = (await a.owner.workflows.list.query({ limit: 1 })).items.map((w) => w.id);
    expect(
      await rest(t, 'PATCH', `/workflows/${id}`, a.ownerKey, {
        steps: [{ action: 'add_tag', input: { contactId: '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10', tags: ['x'] } }],
      }),
    ).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'steps.0.input.contactId' }] } });
    expect(await footprint(t, a.orgId)).toEqual(before);
  });

  it('rotating the token answers a new URL; the old one is 404 from the next request', async () => {
    const wf = await a.owner.workflows.create.mutate({ name: 'Rotate me', steps: [{ action: 'create_task', input: { title: 'Hello' } }] });
    const rotated = await rest(t, 'POST', `/workflows/${wf.id}/rotate-token`, a.ownerKey);
    expect(rotated.status).toBe(200);
    expect(rotated.body.intakeUrl).not.toBe(wf.intakeUrl);
    expect(rotated.body.intakeUrlHint).toBe(`${rotated.body.intakeUrl.slice(0, rotated.body.intakeUrl.length - 37)}…`);
    expect(await postIntake(t, wf.intakeUrl, { email: 'ada@example.com' })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await postIntake(t, rotated.body.intakeUrl, { email: 'ada@example.com' })).toMatchObject({ status: 202 });
  });
});
