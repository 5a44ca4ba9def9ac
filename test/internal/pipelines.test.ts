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
  const data = (err as TRPCClientError<InternalRouter>).data as { httpStatus: number; body: { code: string } };
  return { status: data.httpStatus, code: data.body.code, body: data.body };
};
async function orgWithRoles() {
  const org = await t.newOrg({ plan: 'max' });
  const user = async (role: string) => {
    const [u] = await t.sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', ?) returning id`,
      [org.orgId, `${role}-${randomUUID()}@example.com`, role],
    );
    return client(await t.newKey({ orgId: org.orgId, userId: u!.id, name: role, type: 'internal' }));
  };
  return { ...org, owner: client(org.internalKey), admin: await user('admin'), member: await user('member') };
}
const defaults = async (orgId: string) =>
  t.sql<{ name: string }>(`select name from pipelines where organization_id = ? and is_default`, [orgId]);

describe('pipelines', () => {
  it('lists the default pipeline with its ordered stages, to members too', async () => {
    const { member } = await orgWithRoles();
    const { items } = await member.pipelines.list.query();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ name: 'Sales', isDefault: true });
    expect(items[0]!.stages.map((s) => [s.name, s.position])).toEqual([
      ['New', 0],
      ['Contacted', 1],
      ['Qualified', 2],
      ['Proposal', 3],
      ['Won', 4],
      ['Lost', 5],
    ]);
  });

  it('creates pipelines over REST (201) and keeps names unique case-insensitively', async () => {
    const { internalKey, owner } = await orgWithRoles();
    const r = await api('POST', '/pipelines', internalKey, { name: 'Renewals', stages: ['Due', 'Signed'] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'Renewals',
      isDefault: false,
      stages: [
        { name: 'Due', position: 0 },
        { name: 'Signed', position: 1 },
      ],
    });
    expect(await api('POST', '/pipelines', internalKey, { name: ' renewals ' })).toMatchObject({
      status: 409,
      body: { code: 'pipeline_name_taken' },
    });
    const other = await owner.pipelines.create.mutate({ name: 'Hiring' });
    expect(await failure(owner.pipelines.rename.mutate({ id: other.id, name: 'SALES' }))).toMatchObject({
      status: 409,
      code: 'pipeline_name_taken',
    });
    expect(await owner.pipelines.rename.mutate({ id: other.id, name: 'HIRING' })).toMatchObject({ name: 'HIRING' });
    expect(await failure(owner.pipelines.create.mutate({ name: 'Dup', stages: ['A', 'a'] }))).toMatchObject({
      status: 409,
      code: 'stage_name_taken',
    });
  });

  it('keeps one default: switching moves it, concurrent switches leave exactly one', async () => {
    const { orgId, admin } = await orgWithRoles();
    const made = await Promise.all(['A', 'B', 'C', 'D'].map((name) => admin.pipelines.create.mutate({ name })));
    const switched = await admin.pipelines.setDefault.mutate({ id: made[0]!.id });
    expect(switched.isDefault).toBe(true);
    expect(await defaults(orgId)).toEqual([{ name: 'A' }]);
    const { items } = await admin.pipelines.list.query();
    expect(items[0]!.name).toBe('A');
    expect(items.filter((p) => p.isDefault)).toHaveLength(1);

    await Promise.all(made.map((p) => admin.pipelines.setDefault.mutate({ id: p.id })));
    expect(await defaults(orgId)).toHaveLength(1);
    const created = await admin.pipelines.create.mutate({ name: 'E', isDefault: true });
    expect(created.isDefault).toBe(true);
    expect(await defaults(orgId)).toEqual([{ name: 'E' }]);
  });

  it('adds, renames, reorders and removes stages, keeping positions 0..n-1', async () => {
    const { owner, internalKey } = await orgWithRoles();
    const p = await owner.pipelines.create.mutate({ name: 'Board', stages: ['One', 'Two'] });
    await owner.pipelines.addStage.mutate({ id: p.id, name: 'Zero', position: 0 });
    const next = await owner.pipelines.addStage.mutate({ id: p.id, name: 'Three' });
    expect(next.stages.map((s) => [s.name, s.position])).toEqual([
      ['Zero', 0],
      ['One', 1],
      ['Two', 2],
      ['Three', 3],
    ]);
    expect(await failure(owner.pipelines.addStage.mutate({ id: p.id, name: 'two' }))).toMatchObject({
      status: 409,
      code: 'stage_name_taken',
    });

    const ids = next.stages.map((s) => s.id);
    const reordered = await api('POST', `/pipelines/${p.id}/stages/reorder`, internalKey, { stageIds: [ids[3], ids[2], ids[1], ids[0]] });
    expect(reordered.status).toBe(200);
    expect(reordered.body.stages.map((s: any) => [s.name, s.position])).toEqual([
      ['Three', 0],
      ['Two', 1],
      ['One', 2],
      ['Zero', 3],
    ]);
    for (const bad of [ids.slice(1), [...ids, ids[0]!], [...ids.slice(1), randomUUID()]]) {
      expect(await failure(owner.pipelines.reorderStages.mutate({ id: p.id, stageIds: bad }))).toMatchObject({
        status: 422,
        code: 'invalid_stage_order',
      });
    }

    const renamed = await owner.pipelines.renameStage.mutate({ id: p.id, stageId: ids[1]!, name: 'Uno' });
    expect(renamed.stages.find((s) => s.id === ids[1])?.name).toBe('Uno');
    const removed = await owner.pipelines.removeStage.mutate({ id: p.id, stageId: ids[2]! });
    expect(removed.stages.map((s) => [s.name, s.position])).toEqual([
      ['Three', 0],
      ['Uno', 1],
      ['Zero', 2],
    ]);
  });

  it('refuses to delete a pipeline or remove a stage with deals (409), and deletes empty ones', async () => {
    const { owner, publicKey } = await orgWithRoles();
    const contact = await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email: 'deal@example.com' } });
    const p = await owner.pipelines.create.mutate({ name: 'Busy', stages: ['Open', 'Closing'] });
    const deal = await owner.deals.create.mutate({ contactId: contact.body.id, pipelineId: p.id, title: 'Big one' });

    expect(await failure(owner.pipelines.delete.mutate({ id: p.id }))).toMatchObject({
      status: 409,
      code: 'pipeline_has_deals',
      body: { deals: 1 },
    });
    expect(await failure(owner.pipelines.removeStage.mutate({ id: p.id, stageId: deal.stageId }))).toMatchObject({
      status: 409,
      code: 'stage_has_deals',
    });
    expect(await t.sql(`select id from deals where id = ?`, [deal.id])).toHaveLength(1);

    const sales = (await owner.pipelines.list.query()).items.find((x) => x.name === 'Sales')!;
    await owner.deals.update.mutate({ id: deal.id, pipelineId: sales.id });
    expect(await owner.pipelines.delete.mutate({ id: p.id })).toEqual({ id: p.id, deleted: true });
    expect(await failure(owner.pipelines.get.query({ id: p.id }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('moves lead placements off a removed stage, and promotes a new default when the default is deleted', async () => {
    const { orgId, owner, publicKey } = await orgWithRoles();
    const p = await owner.pipelines.create.mutate({ name: 'Inbound', stages: ['First', 'Second'], isDefault: true });
    const lead = await call(t, 'POST', '/leads', { key: publicKey, body: { email: 'lead@example.com' } });
    expect(lead.body.pipelineItemId).toEqual(expect.any(String));
    const [first, second] = p.stages;
    await owner.pipelines.removeStage.mutate({ id: p.id, stageId: first!.id });
    expect(await t.sql(`select stage_id from pipeline_items where id = ?`, [lead.body.pipelineItemId])).toEqual([{ stage_id: second!.id }]);
    expect(await failure(owner.pipelines.removeStage.mutate({ id: p.id, stageId: second!.id }))).toMatchObject({
      status: 409,
      code: 'stage_has_leads',
    });

    await owner.pipelines.delete.mutate({ id: p.id });
    expect(await defaults(orgId)).toEqual([{ name: 'Sales' }]);
    expect(await t.sql(`select id from pipeline_items where id = ?`, [lead.body.pipelineItemId])).toHaveLength(0);
  });

  it('leaves administration to owners and admins', async () => {
    const { member, admin } = await orgWithRoles();
    const sales = (await member.pipelines.list.query()).items[0]!;
    expect(await member.pipelines.get.query({ id: sales.id })).toMatchObject({ name: 'Sales' });
    const denied = [
      member.pipelines.create.mutate({ name: 'Nope' }),
      member.pipelines.rename.mutate({ id: sales.id, name: 'Nope' }),
      member.pipelines.setDefault.mutate({ id: sales.id }),
      member.pipelines.delete.mutate({ id: sales.id }),
      member.pipelines.addStage.mutate({ id: sales.id, name: 'Nope' }),
      member.pipelines.removeStage.mutate({ id: sales.id, stageId: sales.stages[0]!.id }),
      member.pipelines.reorderStages.mutate({ id: sales.id, stageIds: sales.stages.map((s) => s.id).reverse() }),
    ];
    for (const f of await Promise.all(denied.map(failure))) expect(f).toMatchObject({ status: 403, code: 'forbidden_role' });
    expect((await member.pipelines.get.query({ id: sales.id })).stages).toEqual(sales.stages);
    expect(await admin.pipelines.rename.mutate({ id: sales.id, name: 'Sales 2' })).toMatchObject({ name: 'Sales 2' });
  });

  it("does not let one organization see or touch another's pipelines", async () => {
    const a = await orgWithRoles();
    const b = await orgWithRoles();
    const sales = (await a.owner.pipelines.list.query()).items[0]!;
    expect(await failure(b.owner.pipelines.get.query({ id: sales.id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(b.owner.pipelines.rename.mutate({ id: sales.id, name: 'Mine' }))).toMatchObject({ status: 404 });
    expect(await failure(b.owner.pipelines.setDefault.mutate({ id: sales.id }))).toMatchObject({ status: 404 });
    expect(await failure(b.owner.pipelines.delete.mutate({ id: sales.id }))).toMatchObject({ status: 404 });
    expect(await api('GET', `/pipelines/${sales.id}`, b.internalKey)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await b.owner.pipelines.list.query()).items.map((p) => p.id)).not.toContain(sales.id);
    // Same name in another organization is fine: uniqueness is per organization.
    expect(await b.owner.pipelines.create.mutate({ name: 'Renewals' })).toMatchObject({ name: 'Renewals' });
    expect(await a.owner.pipelines.create.mutate({ name: 'Renewals' })).toMatchObject({ name: 'Renewals' });
    expect((await a.owner.pipelines.get.query({ id: sales.id })).name).toBe('Sales');
  });
});
