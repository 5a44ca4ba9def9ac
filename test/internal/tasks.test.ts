import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { internalClient, internalRest, trpcFailure } from '../support/internal.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

const client = (key: string) => internalClient(t, key);
const api = (method: string, path: string, key: string, body?: unknown) => internalRest(t, method, path, key, body);
const failure = trpcFailure;
async function setup() {
  const org = await t.newOrg({ plan: 'max' });
  const contact = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: `c-${randomUUID()}@example.com` } });
  const [u] = await t.sql<{ id: string }>(
    `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', 'member') returning id`,
    [org.orgId, `m-${randomUUID()}@example.com`],
  );
  const memberKey = await t.newKey({ orgId: org.orgId, userId: u!.id, name: 'member', type: 'internal' });
  return { ...org, owner: client(org.internalKey), member: client(memberKey), memberId: u!.id, contactId: contact.body.id as string };
}
const events = (orgId: string) =>
  t.sql<{ event: string; payload: any }>(
    `select event, payload from outbox_events where organization_id = ? and event like 'task.%' order by created_at`,
    [orgId],
  );

describe('tasks', () => {
  it('creates a task with due date, assignee and contact and emits task.created', async () => {
    const { orgId, member, memberId, contactId } = await setup();
    const task = await member.tasks.create.mutate({
      title: 'Call back',
      dueAt: '2026-12-01T09:00:00+01:00',
      assigneeId: memberId,
      contactId,
    });
    expect(task).toMatchObject({
      title: 'Call back',
      dueAt: '2026-12-01T08:00:00.000Z',
      assigneeId: memberId,
      contactId,
      completedAt: null,
    });
    expect(await events(orgId)).toEqual([{ event: 'task.created', payload: expect.objectContaining({ source: 'app', data: { task } }) }]);
    expect(await member.tasks.get.query({ id: task.id })).toEqual(task);
  });

  it('assigns only active users of the organization, and attaches only its live contacts', async () => {
    const { owner, orgId, memberId, contactId } = await setup();
    const other = await setup();
    expect(await failure(owner.tasks.create.mutate({ title: 'x', assigneeId: other.memberId }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    expect(await failure(owner.tasks.create.mutate({ title: 'x', contactId: other.contactId }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    await t.sql(`update users set active = false where id = ?`, [memberId]);
    expect(await failure(owner.tasks.create.mutate({ title: 'x', assigneeId: memberId }))).toEqual({
      status: 422,
      code: 'assignee_inactive',
    });
    await t.sql(`update contacts set deleted_at = now() where id = ?`, [contactId]);
    expect(await failure(owner.tasks.create.mutate({ title: 'x', contactId }))).toEqual({ status: 404, code: 'not_found' });
    expect(await events(orgId)).toEqual([]);
    expect(await owner.tasks.create.mutate({ title: 'Unattached' })).toMatchObject({ assigneeId: null, contactId: null, dueAt: null });
  });

  it('completes once: repeats and concurrent completions emit task.completed exactly once', async () => {
    const { orgId, member, internalKey } = await setup();
    const task = await member.tasks.create.mutate({ title: 'Send proposal' });
    const done = await member.tasks.complete.mutate({ id: task.id });
    expect(done.completedAt).not.toBeNull();
    const again = await api('POST', `/tasks/${task.id}/complete`, internalKey, {});
    expect(again).toMatchObject({ status: 200, body: { id: task.id, completedAt: done.completedAt } });
    expect((await events(orgId)).map((e) => e.event)).toEqual(['task.created', 'task.completed']);
    expect((await events(orgId))[1]!.payload.data).toEqual({ task: done });

    const racing = await member.tasks.create.mutate({ title: 'Race' });
    const results = await Promise.all(Array.from({ length: 5 }, () => member.tasks.complete.mutate({ id: racing.id })));
    expect(new Set(results.map((r) => r.completedAt)).size).toBe(1);
    expect((await events(orgId)).filter((e) => e.event === 'task.completed' && e.payload.data.task.id === racing.id)).toHaveLength(1);
  });

  it('updates title, due date, assignee and contact over REST, without an event', async () => {
    const { orgId, internalKey, owner, memberId, contactId } = await setup();
    const task = await owner.tasks.create.mutate({ title: 'Draft', dueAt: '2026-01-01T00:00:00Z', contactId });
    const r = await api('POST', `/tasks/${task.id}/update`, internalKey, { title: 'Final', dueAt: null, assigneeId: memberId });
    expect(r).toMatchObject({ status: 200, body: { title: 'Final', dueAt: null, assigneeId: memberId, contactId } });
    expect((await owner.tasks.update.mutate({ id: task.id, contactId: null })).contactId).toBeNull();
    expect((await events(orgId)).map((e) => e.event)).toEqual(['task.created']);
    const created = await api('POST', '/tasks', internalKey, { title: 'Via REST' });
    expect(created).toMatchObject({ status: 201, body: { title: 'Via REST' } });
  });

  it('lists by status, assignee and contact', async () => {
    const { member, memberId, contactId } = await setup();
    const a = await member.tasks.create.mutate({ title: 'a', assigneeId: memberId });
    await member.tasks.create.mutate({ title: 'b', contactId });
    await member.tasks.complete.mutate({ id: a.id });
    expect((await member.tasks.list.query({ status: 'open' })).items.map((x) => x.title)).toEqual(['b']);
    expect((await member.tasks.list.query({ status: 'completed' })).items.map((x) => x.title)).toEqual(['a']);
    expect((await member.tasks.list.query({ assigneeId: memberId })).items.map((x) => x.title)).toEqual(['a']);
    expect((await member.tasks.list.query({ contactId })).items.map((x) => x.title)).toEqual(['b']);
    const page = await member.tasks.list.query({ limit: 1 });
    expect(page.items.map((x) => x.title)).toEqual(['b']);
    expect((await member.tasks.list.query({ limit: 1, cursor: page.nextCursor! })).items.map((x) => x.title)).toEqual(['a']);
  });

  it("keeps another organization's tasks out of reach", async () => {
    const a = await setup();
    const b = await setup();
    const task = await a.owner.tasks.create.mutate({ title: 'Private' });
    expect(await failure(b.owner.tasks.get.query({ id: task.id }))).toEqual({ status: 404, code: 'not_found' });
    expect(await failure(b.owner.tasks.complete.mutate({ id: task.id }))).toEqual({ status: 404, code: 'not_found' });
    expect(await failure(b.owner.tasks.update.mutate({ id: task.id, title: 'Mine' }))).toEqual({ status: 404, code: 'not_found' });
    expect(await api('GET', `/tasks/${task.id}`, b.internalKey)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await b.owner.tasks.list.query({})).items).toEqual([]);
    expect(await a.owner.tasks.get.query({ id: task.id })).toMatchObject({ title: 'Private', completedAt: null });
    expect(await events(b.orgId)).toEqual([]);
  });
});
