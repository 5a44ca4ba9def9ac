import { randomUUID } from 'node:crypto';
import type { InternalRouter } from '@leadwire/core';
import { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { internalClient, internalRest } from '../support/internal.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

const client = (key: string) => internalClient(t, key);
const api = (method: string, path: string, key: string, body?: unknown) => internalRest(t, method, path, key, body);
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCClientError);
  const data = (err as TRPCClientError<InternalRouter>).data as { httpStatus: number; body: { code: string; status?: string } };
  return { status: data.httpStatus, code: data.body.code, was: data.body.status };
};
async function setup() {
  const org = await t.newOrg({ plan: 'max' });
  const c = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: `c-${randomUUID()}@example.com` } });
  const [u] = await t.sql<{ id: string }>(
    `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', 'member') returning id`,
    [org.orgId, `m-${randomUUID()}@example.com`],
  );
  const member = client(await t.newKey({ orgId: org.orgId, userId: u!.id, name: 'member', type: 'internal' }));
  return { ...org, owner: client(org.internalKey), member, memberId: u!.id, contactId: c.body.id as string };
}
const events = (orgId: string) =>
  t.sql<{ event: string; payload: any }>(
    `select event, payload from outbox_events where organization_id = ? and event like 'ai_action.%' order by created_at, event`,
    [orgId],
  );
const suggestion = (contactId: string) => ({
  contactId,
  kind: 'send_sms',
  summary: 'Asked for pricing twice; follow up',
  payload: { body: 'Hi! Here is our pricing.' },
});

describe('AI actions', () => {
  it('files a pending suggestion and emits ai_action.created with source ai', async () => {
    const { orgId, owner, contactId } = await setup();
    const action = await owner.aiActions.create.mutate(suggestion(contactId));
    expect(action).toMatchObject({ ...suggestion(contactId), status: 'pending', decidedBy: null, decidedAt: null, reason: null });
    expect(await events(orgId)).toEqual([
      { event: 'ai_action.created', payload: expect.objectContaining({ source: 'ai', data: { aiAction: action } }) },
    ]);
    expect(await failure(owner.aiActions.create.mutate({ ...suggestion(contactId), kind: 'Send SMS!' }))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
  });

  it('lets a member approve once: ai_action.approved (source app), then 409 either way', async () => {
    const { orgId, owner, member, memberId, contactId } = await setup();
    const action = await owner.aiActions.create.mutate(suggestion(contactId));
    const approved = await member.aiActions.approve.mutate({ id: action.id });
    expect(approved).toMatchObject({ status: 'approved', decidedBy: memberId, decidedAt: expect.any(String), reason: null });
    expect((await events(orgId)).at(-1)).toMatchObject({
      event: 'ai_action.approved',
      payload: { source: 'app', data: { aiAction: approved } },
    });

    expect(await failure(member.aiActions.approve.mutate({ id: action.id }))).toEqual({
      status: 409,
      code: 'ai_action_already_decided',
      was: 'approved',
    });
    expect(await failure(owner.aiActions.reject.mutate({ id: action.id, reason: 'changed my mind' }))).toMatchObject({
      status: 409,
      code: 'ai_action_already_decided',
    });
    expect((await events(orgId)).map((e) => e.event)).toEqual(['ai_action.created', 'ai_action.approved']);
    expect(await owner.aiActions.get.query({ id: action.id })).toEqual(approved);
  });

  it('rejects with an optional reason over REST', async () => {
    const { orgId, owner, internalKey, contactId } = await setup();
    const withReason = await owner.aiActions.create.mutate(suggestion(contactId));
    const r = await api('POST', `/ai-actions/${withReason.id}/reject`, internalKey, { reason: 'Already called them' });
    expect(r).toMatchObject({ status: 200, body: { status: 'rejected', reason: 'Already called them' } });
    const created = await api('POST', '/ai-actions', internalKey, { ...suggestion(contactId), kind: 'add_tag', payload: undefined });
    expect(created).toMatchObject({ status: 201, body: { kind: 'add_tag', payload: {} } });
    const plain = await owner.aiActions.reject.mutate({ id: created.body.id });
    expect(plain).toMatchObject({ status: 'rejected', reason: null });
    expect(await api('POST', `/ai-actions/${created.body.id}/approve`, internalKey, {})).toMatchObject({
      status: 409,
      body: { code: 'ai_action_already_decided' },
    });
    const rejected = (await events(orgId)).filter((e) => e.event === 'ai_action.rejected');
    expect(rejected.map((e) => e.payload.data.aiAction.reason).sort()).toEqual(['Already called them', null].sort());
  });

  it('decides exactly once under concurrent approve and reject', async () => {
    const { orgId, owner, member, contactId } = await setup();
    const action = await owner.aiActions.create.mutate(suggestion(contactId));
    const outcomes = await Promise.allSettled([
      owner.aiActions.approve.mutate({ id: action.id }),
      member.aiActions.reject.mutate({ id: action.id }),
      member.aiActions.approve.mutate({ id: action.id }),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect((await events(orgId)).filter((e) => e.event !== 'ai_action.created')).toHaveLength(1);
  });

  it('lists by contact and status', async () => {
    const { owner, contactId } = await setup();
    const a = await owner.aiActions.create.mutate(suggestion(contactId));
    await owner.aiActions.create.mutate(suggestion(contactId));
    await owner.aiActions.approve.mutate({ id: a.id });
    expect((await owner.aiActions.list.query({ status: 'pending', contactId })).items).toHaveLength(1);
    expect((await owner.aiActions.list.query({ status: 'approved' })).items.map((x) => x.id)).toEqual([a.id]);
  });

  it("keeps another organization's suggestions and contacts out of reach", async () => {
    const a = await setup();
    const b = await setup();
    const action = await a.owner.aiActions.create.mutate(suggestion(a.contactId));
    expect(await failure(b.owner.aiActions.create.mutate(suggestion(a.contactId)))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(b.owner.aiActions.get.query({ id: action.id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(b.owner.aiActions.approve.mutate({ id: action.id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(b.owner.aiActions.reject.mutate({ id: action.id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await api('GET', `/ai-actions/${action.id}`, b.internalKey)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await b.owner.aiActions.list.query({})).items).toEqual([]);
    expect(await a.owner.aiActions.get.query({ id: action.id })).toMatchObject({ status: 'pending' });
  });
});
