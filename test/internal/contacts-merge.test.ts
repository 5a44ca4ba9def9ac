import { randomUUID } from 'node:crypto';
import { MERGE_HANDLED_TABLES } from '#core/contacts/app/merge.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { contactCount, eventsOf, newTestOrg, refusal, rest, type TestOrg } from './contacts-support.ts';

let t: TestApp;
let a: TestOrg;
let b: TestOrg;

beforeAll(async () => {
  t = await initTestApp();
  [a, b] = await Promise.all([newTestOrg(t, 'max'), newTestOrg(t, 'max')]);
});
afterAll(async () => t?.close());

async function pipeline(orgId: string, name: string) {
  const [p] = await t.sql<{ id: string }>(`insert into pipelines (organization_id, name) values (?, ?) returning id`, [orgId, name]);
  const [s] = await t.sql<{ id: string }>(
    `insert into pipeline_stages (organization_id, pipeline_id, name, position) values (?, ?, 'First', 0) returning id`,
    [orgId, p!.id],
  );
  return { id: p!.id, stageId: s!.id };
}

const place = (orgId: string, contactId: string, p: { id: string; stageId: string }, createdAt: string) =>
  t.sql(`insert into pipeline_items (organization_id, contact_id, pipeline_id, stage_id, created_at) values (?, ?, ?, ?, ?)`, [
    orgId,
    contactId,
    p.id,
    p.stageId,
    createdAt,
  ]);

async function conversation(orgId: string, contactId: string, channel: string, messages: number) {
  const [c] = await t.sql<{ id: string }>(
    `insert into conversations (organization_id, contact_id, channel) values (?, ?, ?) returning id`,
    [orgId, contactId, channel],
  );
  for (let i = 0; i < messages; i++) {
    await t.sql(
      `insert into messages (organization_id, conversation_id, contact_id, direction, channel, from_address, to_address, body, status, created_at)
       values (?, ?, ?, 'inbound', ?, 'x', 'y', ?, 'received', now() - make_interval(mins => ?))`,
      [orgId, c!.id, contactId, channel, `m${i}`, 10 - i],
    );
  }
  return c!.id;
}

async function attachEverything(orgId: string, contactId: string) {
  const args = [orgId, contactId];
  const [stage] = await t.sql<{ id: string; pipeline_id: string }>(
    `select s.id, s.pipeline_id from pipeline_stages s join pipelines p on p.id = s.pipeline_id where p.organization_id = ? and p.is_default order by s.position limit 1`,
    [orgId],
  );
  await t.sql(`insert into notes (organization_id, contact_id, body) values (?, ?, 'note')`, args);
  await t.sql(`insert into deals (organization_id, contact_id, pipeline_id, stage_id, title) values (?, ?, ?, ?, 'deal')`, [
    ...args,
    stage!.pipeline_id,
    stage!.id,
  ]);
  await t.sql(`insert into tasks (organization_id, contact_id, title) values (?, ?, 'task')`, args);
  await t.sql(
    `insert into bookings (organization_id, contact_id, starts_at, ends_at) values (?, ?, now(), now() + interval '1 hour')`,
    args,
  );
  await t.sql(`insert into workflow_runs (organization_id, contact_id, workflow) values (?, ?, 'wf')`, args);
  await t.sql(`insert into ai_actions (organization_id, contact_id, kind, summary) values (?, ?, 'k', 's')`, args);
  await t.sql(
    `insert into contact_files (organization_id, contact_id, kind, filename, content_type, size, sha256, storage_key) values (?, ?, 'file', 'f', 'text/plain', 1, 'x', ?)`,
    [...args, randomUUID()],
  );
}

const SIMPLE = ['notes', 'deals', 'tasks', 'bookings', 'workflow_runs', 'ai_actions', 'contact_files'];

async function countsFor(contactId: string) {
  const out: Record<string, number> = {};
  for (const table of [...SIMPLE, 'pipeline_items', 'conversations', 'messages']) {
    const [row] = await t.sql<{ n: number }>(`select count(*)::int as n from ${table} where contact_id = ?`, [contactId]);
    out[table] = row!.n;
  }
  return out;
}

/** Everything a merge could touch, to prove a refused merge changed nothing. */
async function snapshot(orgId: string) {
  const tables = ['contacts', ...MERGE_HANDLED_TABLES, 'outbox_events'];
  const out: Record<string, unknown> = {};
  for (const table of tables) out[table] = await t.sql(`select * from ${table} where organization_id = ? order by id`, [orgId]);
  out.count = await contactCount(t, orgId);
  return out;
}

describe('merging contacts', () => {
  it('keeps the primary values, fills its blanks, unites tags, moves the timeline and deletes the duplicates for good', async () => {
    const primary = await a.owner.contacts.create.mutate({ firstName: 'Ada', tags: ['vip'], custom: { plan: 'pro' } });
    const d1 = await a.owner.contacts.create.mutate({
      email: 'ada@merge.example',
      firstName: 'Augusta',
      lastName: 'Lovelace',
      phone: '+44 1',
      smsConsent: true,
      tags: ['VIP', 'math'],
      custom: { plan: 'free', city: 'London' },
    });
    const d2 = await a.owner.contacts.create.mutate({ lastName: 'King', jobTitle: 'Countess', tags: ['engines'] });
    for (const c of [primary, d1, d2]) await attachEverything(a.orgId, c.id);
    const x = await pipeline(a.orgId, 'X');
    const y = await pipeline(a.orgId, 'Y');
    await place(a.orgId, primary.id, x, '2026-01-01T00:00:00Z');
    await place(a.orgId, d1.id, x, '2026-01-01T00:00:00Z');
    await place(a.orgId, d1.id, y, '2026-01-03T00:00:00Z');
    await place(a.orgId, d2.id, y, '2026-01-02T00:00:00Z');
    const primarySms = await conversation(a.orgId, primary.id, 'sms', 1);
    await conversation(a.orgId, d1.id, 'sms', 2);
    const d2Email = await conversation(a.orgId, d2.id, 'email', 1);
    const count = await contactCount(t, a.orgId);

    const r = await rest(t, 'POST', '/contacts/merge', a.ownerKey, { primaryId: primary.id, secondaryIds: [d1.id, d2.id] });
    expect(r.status).toBe(200);
    expect(r.body.contact).toMatchObject({
      id: primary.id,
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@merge.example',
      phone: '+44 1',
      smsConsent: true,
      jobTitle: 'Countess',
      tags: ['vip', 'math', 'engines'],
      custom: { plan: 'pro', city: 'London' },
      source: 'manual',
      stage: 'lead',
      // email +15, phone +10, job title +10, a booking +20
      leadScore: 55,
    });
    expect(r.body.mergedIds).toEqual([d1.id, d2.id]);
    expect(r.body.moved).toMatchObject({
      notes: 2,
      deals: 2,
      tasks: 2,
      bookings: 2,
      workflowRuns: 2,
      files: 2,
      aiActions: 2,
      pipelineItems: 1,
      conversations: 1,
      messages: 3,
    });
    expect(r.body.skippedPipelineItems).toBe(2);

    expect(await countsFor(primary.id)).toEqual({
      ...Object.fromEntries(SIMPLE.map((k) => [k, 3])),
      pipeline_items: 2,
      conversations: 2,
      messages: 4,
    });
    // Y kept the oldest duplicate placement (d2's); the primary's own X placement stayed.
    const items = await t.sql<{ pipeline_id: string; created_at: string }>(
      `select pipeline_id, created_at from pipeline_items where contact_id = ? order by created_at`,
      [primary.id],
    );
    expect(items.filter((i) => i.pipeline_id === y.id).map((i) => new Date(i.created_at).toISOString())).toEqual([
      '2026-01-02T00:00:00.000Z',
    ]);
    const convs = await t.sql<{ id: string; n: number }>(
      `select c.id, (select count(*)::int from messages m where m.conversation_id = c.id) as n from conversations c where contact_id = ? order by channel`,
      [primary.id],
    );
    expect(convs).toEqual([
      { id: d2Email, n: 1 },
      { id: primarySms, n: 3 },
    ]);
    for (const d of [d1, d2]) {
      expect(await t.sql('select id from contacts where id = ?', [d.id])).toEqual([]);
      expect(Object.values(await countsFor(d.id)).every((n) => n === 0)).toBe(true);
    }
    expect(await contactCount(t, a.orgId)).toBe(count - 2);

    const updated = (await eventsOf(t, a.orgId, primary.id)).filter((e) => e.event === 'contact.updated').at(-1);
    expect(updated).toMatchObject({
      source: 'app',
      data: { mergedIds: [d1.id, d2.id], contact: { id: primary.id, email: 'ada@merge.example' } },
    });
    for (const d of [d1, d2]) {
      expect((await eventsOf(t, a.orgId, d.id)).at(-1)).toMatchObject({
        event: 'contact.deleted',
        source: 'app',
        data: { mergedInto: primary.id },
      });
    }
  });

  it("keeps one photo: the primary's, else the newest duplicate's; the others become files", async () => {
    const photo = (contactId: string, name: string, ageDays: number) =>
      t.sql(
        `insert into contact_files (organization_id, contact_id, kind, filename, content_type, size, sha256, storage_key, created_at)
         values (?, ?, 'photo', ?, 'image/png', 1, 'x', ?, now() - make_interval(days => ?))`,
        [a.orgId, contactId, name, `k-${name}`, ageDays],
      );
    const kinds = async (contactId: string) =>
      Object.fromEntries(
        (await t.sql<{ filename: string; kind: string }>('select filename, kind from contact_files where contact_id = ?', [contactId])).map(
          (r) => [r.filename, r.kind],
        ),
      );
    const p1 = await a.owner.contacts.create.mutate({ firstName: 'Has photo' });
    const q1 = await a.owner.contacts.create.mutate({ firstName: 'Dup one' });
    await photo(p1.id, 'primary.png', 5);
    await photo(q1.id, 'dup.png', 1);
    await a.owner.contacts.merge.mutate({ primaryId: p1.id, secondaryIds: [q1.id] });
    expect(await kinds(p1.id)).toEqual({ 'primary.png': 'photo', 'dup.png': 'file' });

    const p2 = await a.owner.contacts.create.mutate({ firstName: 'No photo' });
    const q2 = await a.owner.contacts.create.mutate({ firstName: 'Old photo' });
    const q3 = await a.owner.contacts.create.mutate({ firstName: 'New photo' });
    await photo(q2.id, 'old.png', 9);
    await photo(q3.id, 'new.png', 2);
    await a.owner.contacts.merge.mutate({ primaryId: p2.id, secondaryIds: [q2.id, q3.id] });
    expect(await kinds(p2.id)).toEqual({ 'old.png': 'file', 'new.png': 'photo' });
  });

  it('answers a wrong payload shape with 400 `Validation failed`, over REST and typed, and changes nothing', async () => {
    const p = await a.owner.contacts.create.mutate({ firstName: 'P' });
    const before = await snapshot(a.orgId);
    for (const body of [
      {},
      { primaryId: p.id },
      { primaryId: p.id, secondaryIds: 'nope' },
      { primaryId: 'nope', secondaryIds: [randomUUID()] },
      { primaryId: p.id, secondaryIds: [] },
    ]) {
      const r = await rest(t, 'POST', '/contacts/merge', a.ownerKey, body);
      expect(r, JSON.stringify(body)).toMatchObject({ status: 400, body: { error: 'Validation failed', code: 'validation_failed' } });
      expect(r.body.issues.length).toBeGreaterThan(0);
    }
    // Not an object at all: said so (issue 17), rather than judged field by field.
    expect(await rest(t, 'POST', '/contacts/merge', a.ownerKey, [1, 2])).toMatchObject({
      status: 400,
      body: { error: 'Validation failed: the body must be a JSON object, not an array', code: 'validation_failed', issues: [{ path: '' }] },
    });
    const typed = await refusal(a.owner.contacts.merge.mutate({ primaryId: p.id, secondaryIds: 'nope' as unknown as string[] }));
    expect(typed).toMatchObject({ status: 400, error: 'Validation failed', code: 'validation_failed' });
    expect(await snapshot(a.orgId)).toEqual(before);
  });

  it('refuses the primary among the duplicates, a repeated duplicate, and unknown, foreign or trashed ids, changing nothing', async () => {
    const p = await a.owner.contacts.create.mutate({ firstName: 'P2' });
    const d = await a.owner.contacts.create.mutate({ firstName: 'D2' });
    const trashed = await a.owner.contacts.create.mutate({ firstName: 'T2' });
    await a.owner.contacts.delete.mutate({ id: trashed.id });
    const foreign = await b.owner.contacts.create.mutate({ firstName: 'Foreign' });
    await attachEverything(a.orgId, d.id);
    const before = await snapshot(a.orgId);
    const foreignBefore = await snapshot(b.orgId);

    expect(await refusal(a.owner.contacts.merge.mutate({ primaryId: p.id, secondaryIds: [d.id, p.id] }))).toMatchObject({
      status: 400,
      error: 'Validation failed',
    });
    expect(await refusal(a.owner.contacts.merge.mutate({ primaryId: p.id, secondaryIds: [d.id, d.id] }))).toMatchObject({
      status: 400,
      error: 'Validation failed',
    });
    for (const bad of [randomUUID(), foreign.id, trashed.id]) {
      const r = await refusal(a.owner.contacts.merge.mutate({ primaryId: p.id, secondaryIds: [d.id, bad] }));
      expect(r).toMatchObject({ status: 404, code: 'not_found', body: { ids: [bad] } });
    }
    expect(await refusal(a.owner.contacts.merge.mutate({ primaryId: foreign.id, secondaryIds: [d.id] }))).toMatchObject({ status: 404 });
    expect(await snapshot(a.orgId)).toEqual(before);
    expect(await snapshot(b.orgId)).toEqual(foreignBefore);
  });

  it('is for owners and admins: it cannot be undone', async () => {
    const p = await a.owner.contacts.create.mutate({ firstName: 'P3' });
    const d = await a.owner.contacts.create.mutate({ firstName: 'D3' });
    expect(await refusal(a.member.contacts.merge.mutate({ primaryId: p.id, secondaryIds: [d.id] }))).toMatchObject({
      status: 403,
      code: 'forbidden_role',
    });
    await expect(a.admin.contacts.merge.mutate({ primaryId: p.id, secondaryIds: [d.id] })).resolves.toMatchObject({ mergedIds: [d.id] });
  });

  it('serialises merges over the same contacts instead of deadlocking: one wins, the other finds its duplicate gone', async () => {
    for (let round = 0; round < 3; round++) {
      const x = await a.session.contacts.create.mutate({ firstName: `X${round}` });
      const y = await a.session.contacts.create.mutate({ firstName: `Y${round}` });
      await attachEverything(a.orgId, x.id);
      await attachEverything(a.orgId, y.id);
      const results = await Promise.allSettled([
        a.session.contacts.merge.mutate({ primaryId: x.id, secondaryIds: [y.id] }),
        a.session.contacts.merge.mutate({ primaryId: y.id, secondaryIds: [x.id] }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const failed = results.find((r) => r.status === 'rejected');
      expect(await refusal(Promise.reject(failed!.reason as Error))).toMatchObject({ status: 404, code: 'not_found' });
      const left = await t.sql<{ id: string }>('select id from contacts where id in (?, ?)', [x.id, y.id]);
      expect(left).toHaveLength(1);
      expect(Object.values(await countsFor(left[0]!.id)).reduce((s, n) => s + n, 0)).toBe(2 * SIMPLE.length);
    }
  });

  it('handles every table that references contacts (a new one must be added to the merge)', async () => {
    const refs = await t.sql<{ table_name: string }>(
      `select distinct cl.relname as table_name from pg_constraint c join pg_class cl on cl.oid = c.conrelid
       where c.contype = 'f' and c.confrelid = 'contacts'::regclass`,
    );
    expect(refs.map((r) => r.table_name).sort()).toEqual([...MERGE_HANDLED_TABLES].sort());
  });
});
