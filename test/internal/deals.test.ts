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
/** An organization (Max plan, so the Internal-key rate limit stays out of the way) with a contact and a member. */
async function setup() {
  const org = await t.newOrg({ plan: 'max' });
  const contact = await call(t, 'POST', '/contacts/upsert', {
    key: org.publicKey,
    body: { email: `c-${randomUUID()}@example.com`, firstName: 'Ada' },
  });
  const [u] = await t.sql<{ id: string }>(
    `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', 'member') returning id`,
    [org.orgId, `m-${randomUUID()}@example.com`],
  );
  const memberKey = await t.newKey({ orgId: org.orgId, userId: u!.id, name: 'member', type: 'internal' });
  const owner = client(org.internalKey);
  const sales = (await owner.pipelines.list.query()).items[0]!;
  return { ...org, owner, member: client(memberKey), contactId: contact.body.id as string, sales };
}
const events = (orgId: string, prefix = 'deal.') =>
  t.sql<{ event: string; payload: any }>(
    `select event, payload from outbox_events where organization_id = ? and event like ? order by created_at, event`,
    [orgId, `${prefix}%`],
  );

describe('deals', () => {
  it('creates a deal on the first stage of the default pipeline and emits deal.created', async () => {
    const { orgId, member, contactId, sales } = await setup();
    const deal = await member.deals.create.mutate({ contactId, title: 'Website redesign', valueCents: 1_250_000, currency: 'eur' });
    expect(deal).toMatchObject({
      contactId,
      pipelineId: sales.id,
      stageId: sales.stages[0]!.id,
      status: 'open',
      closedAt: null,
      valueCents: 1_250_000,
      currency: 'EUR',
    });
    const [e, ...more] = await events(orgId);
    expect(more).toHaveLength(0);
    expect(e).toMatchObject({ event: 'deal.created', payload: { event: 'deal.created', source: 'app', data: { deal } } });
  });

  it('creates over REST (201) on a chosen stage; null value stays null', async () => {
    const { internalKey, contactId, sales } = await setup();
    const stageId = sales.stages[2]!.id;
    const r = await api('POST', '/deals', internalKey, { contactId, pipelineId: sales.id, stageId, title: 'Pilot', valueCents: null });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ stageId, valueCents: null, currency: 'USD' });
    expect(await api('GET', `/deals/${r.body.id}`, internalKey)).toMatchObject({ status: 200, body: { id: r.body.id } });
  });

  it("refuses a stage outside the deal's pipeline, unknown pipelines, and contacts that are trashed or foreign", async () => {
    const { owner, orgId, contactId, sales } = await setup();
    const other = await owner.pipelines.create.mutate({ name: 'Other', stages: ['X'] });
    const empty = await owner.pipelines.create.mutate({ name: 'Empty' });
    expect(await failure(owner.deals.create.mutate({ contactId, pipelineId: sales.id, stageId: other.stages[0]!.id, title: 'x' }))).toEqual(
      { status: 422, code: 'stage_not_in_pipeline' },
    );
    expect(await failure(owner.deals.create.mutate({ contactId, pipelineId: empty.id, title: 'x' }))).toEqual({
      status: 422,
      code: 'pipeline_has_no_stages',
    });
    expect(await failure(owner.deals.create.mutate({ contactId, pipelineId: randomUUID(), title: 'x' }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    const deal = await owner.deals.create.mutate({ contactId, title: 'ok' });
    expect(await failure(owner.deals.update.mutate({ id: deal.id, stageId: other.stages[0]!.id }))).toEqual({
      status: 422,
      code: 'stage_not_in_pipeline',
    });

    const foreign = await setup();
    expect(await failure(owner.deals.create.mutate({ contactId: foreign.contactId, title: 'x' }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    expect(await failure(owner.deals.create.mutate({ contactId, pipelineId: foreign.sales.id, title: 'x' }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    await t.sql(`update contacts set deleted_at = now() where id = ?`, [contactId]);
    expect(await failure(owner.deals.create.mutate({ contactId, title: 'x' }))).toEqual({ status: 404, code: 'not_found' });
    expect(await failure(owner.deals.get.query({ id: deal.id }))).toEqual({ status: 404, code: 'not_found' });
    expect((await t.sql(`select count(*)::int as n from deals where organization_id = ?`, [orgId]))[0]).toEqual({ n: 1 });
  });

  it('emits deal.updated, deal.stage_changed (from/to), deal.won and deal.lost for what changed, and nothing for no change', async () => {
    const { owner, orgId, contactId, sales } = await setup();
    const deal = await owner.deals.create.mutate({ contactId, title: 'Renewal', valueCents: 100 });
    const seen = async () => (await events(orgId)).slice(1).map((e) => e.event);

    const updated = await owner.deals.update.mutate({ id: deal.id, title: 'Renewal 2027', valueCents: 200, currency: 'USD' });
    expect(updated).toMatchObject({ title: 'Renewal 2027', valueCents: 200 });
    expect((await events(orgId)).at(-1)?.payload.data).toEqual({ deal: updated, changed: ['title', 'valueCents'] });

    const [, contacted, qualified] = sales.stages;
    const moved = await owner.deals.update.mutate({ id: deal.id, stageId: qualified!.id });
    expect(moved.stageId).toBe(qualified!.id);
    expect((await events(orgId)).at(-1)).toMatchObject({
      event: 'deal.stage_changed',
      payload: {
        source: 'app',
        data: { deal: moved, fromStage: { id: sales.stages[0]!.id, name: 'New' }, toStage: { id: qualified!.id, name: 'Qualified' } },
      },
    });

    const won = await owner.deals.update.mutate({ id: deal.id, status: 'won' });
    expect(won.status).toBe('won');
    expect(won.closedAt).not.toBeNull();
    expect((await events(orgId)).at(-1)).toMatchObject({ event: 'deal.won', payload: { data: { deal: won } } });
    const lost = await owner.deals.update.mutate({ id: deal.id, status: 'lost' });
    expect((await events(orgId)).at(-1)).toMatchObject({
      event: 'deal.lost',
      payload: { data: { deal: { status: 'lost', closedAt: lost.closedAt } } },
    });

    const before = await seen();
    await owner.deals.update.mutate({ id: deal.id, status: 'lost', title: 'Renewal 2027', stageId: qualified!.id });
    expect(await seen()).toEqual(before);

    const reopened = await owner.deals.update.mutate({ id: deal.id, status: 'open', stageId: contacted!.id });
    expect(reopened).toMatchObject({ status: 'open', closedAt: null, stageId: contacted!.id });
    expect((await seen()).slice(before.length).sort()).toEqual(['deal.stage_changed', 'deal.updated']);
    expect((await events(orgId)).at(-1)?.payload.data.deal).toEqual(reopened);
    expect(before).toEqual(['deal.updated', 'deal.stage_changed', 'deal.won', 'deal.lost']);
  });

  it('moves a deal to another pipeline (its first stage unless one is named) over REST', async () => {
    const { owner, internalKey, contactId, orgId } = await setup();
    const other = await owner.pipelines.create.mutate({ name: 'Partners', stages: ['Intro', 'Signed'] });
    const deal = await owner.deals.create.mutate({ contactId, title: 'Referral' });
    const r = await api('POST', `/deals/${deal.id}/update`, internalKey, { pipelineId: other.id });
    expect(r).toMatchObject({ status: 200, body: { pipelineId: other.id, stageId: other.stages[0]!.id } });
    expect((await events(orgId)).at(-1)?.payload.data.toStage).toEqual({ id: other.stages[0]!.id, name: 'Intro', pipelineId: other.id });
  });

  it('lists deals newest first with filters and a cursor', async () => {
    const { owner, member, internalKey, contactId, sales } = await setup();
    const made = [];
    for (const title of ['d1', 'd2', 'd3']) made.push(await member.deals.create.mutate({ contactId, title }));
    await owner.deals.update.mutate({ id: made[0]!.id, status: 'won' });
    const page1 = await member.deals.list.query({ limit: 2 });
    expect(page1.items.map((d) => d.title)).toEqual(['d3', 'd2']);
    const page2 = await member.deals.list.query({ limit: 2, cursor: page1.nextCursor! });
    expect(page2).toMatchObject({ items: [{ title: 'd1' }], nextCursor: null });
    expect((await member.deals.list.query({ status: 'won' })).items.map((d) => d.title)).toEqual(['d1']);
    expect((await member.deals.list.query({ stageId: sales.stages[1]!.id })).items).toEqual([]);
    expect(await failure(member.deals.list.query({ limit: 101 }))).toEqual({ status: 400, code: 'validation_failed' });
    const rest = await api('GET', `/deals?limit=1&status=open&contactId=${contactId}`, internalKey);
    expect(rest).toMatchObject({ status: 200, body: { items: [{ title: 'd3' }], nextCursor: page1.items[0]!.id } });
    expect(await api('GET', '/deals?limit=500', internalKey)).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
  });

  it("keeps another organization's deals out of reach", async () => {
    const a = await setup();
    const b = await setup();
    const deal = await a.owner.deals.create.mutate({ contactId: a.contactId, title: 'Secret' });
    expect(await failure(b.owner.deals.get.query({ id: deal.id }))).toEqual({ status: 404, code: 'not_found' });
    expect(await failure(b.owner.deals.update.mutate({ id: deal.id, status: 'won' }))).toEqual({ status: 404, code: 'not_found' });
    expect(await api('POST', `/deals/${deal.id}/update`, b.internalKey, { title: 'Mine' })).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect((await b.owner.deals.list.query({})).items).toEqual([]);
    expect((await b.owner.deals.list.query({ contactId: a.contactId })).items).toEqual([]);
    expect(await a.owner.deals.get.query({ id: deal.id })).toMatchObject({ title: 'Secret', status: 'open' });
  });
});
