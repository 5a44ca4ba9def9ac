import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let key: string;
let orgId: string;
beforeAll(async () => {
  t = await initTestApp();
  ({ publicKey: key, orgId } = await t.newOrg());
});
afterAll(async () => t?.close());

const lead = (body: unknown) => call(t, 'POST', '/leads', { key, body });
let n = 0;
const email = () => `lead${++n}-${Date.now()}@example.com`;
const items = (contactId: string) =>
  t.sql<any>(
    `select i.id, p.name as pipeline, s.name as stage from pipeline_items i join pipelines p on p.id = i.pipeline_id
     join pipeline_stages s on s.id = i.stage_id where i.contact_id = ?`,
    [contactId],
  );

async function pipeline(name: string, stages: string[]) {
  const [p] = await t.sql<any>('insert into pipelines (organization_id, name) values (?, ?) returning id', [orgId, name]);
  // Inserted out of order on purpose: "first stage" means lowest position, not first inserted.
  for (const [i, s] of [...stages.entries()].reverse()) {
    await t.sql('insert into pipeline_stages (organization_id, pipeline_id, name, position) values (?, ?, ?, ?)', [orgId, p.id, s, i]);
  }
  return p.id as string;
}

describe('lead rules', () => {
  it('rule 1: creates the contact and places it on the first stage of the default pipeline', async () => {
    const r = await lead({ email: email(), firstName: 'Lee' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: expect.any(String), created: true, pipelineItemId: expect.any(String), warning: null });
    expect(await items(r.body.id)).toEqual([{ id: r.body.pipelineItemId, pipeline: 'Sales', stage: 'New' }]);
  });

  it('rule 1: places on the first stage of a named pipeline (case-insensitive), updating an existing contact', async () => {
    await pipeline('Partners', ['Intro', 'Signed']);
    const e = email();
    const c = await call(t, 'POST', '/contacts/upsert', { key, body: { email: e } });
    const r = await lead({ email: e, pipeline: 'partners', lastName: 'Updated' });
    expect(r.body).toMatchObject({ id: c.body.id, created: false, warning: null });
    expect(await items(c.body.id)).toEqual([{ id: r.body.pipelineItemId, pipeline: 'Partners', stage: 'Intro' }]);
    const [row] = await t.sql<any>('select last_name from contacts where id = ?', [c.body.id]);
    expect(row.last_name).toBe('Updated');
  });

  it('rule 2: a contact already on the pipeline is skipped (same placement, no duplicate)', async () => {
    const e = email();
    const a = await lead({ email: e });
    await t.sql(
      `update pipeline_items set stage_id = (select id from pipeline_stages where name = 'Qualified' and organization_id = ?) where id = ?`,
      [orgId, a.body.pipelineItemId],
    );
    const b = await lead({ email: e });
    expect(b.body).toMatchObject({ id: a.body.id, created: false, pipelineItemId: a.body.pipelineItemId, warning: null });
    expect(await items(a.body.id)).toEqual([{ id: a.body.pipelineItemId, pipeline: 'Sales', stage: 'Qualified' }]);
  });

  it('rule 2 under concurrency: simultaneous leads place the contact once', async () => {
    const e = email();
    const rs = await Promise.all(Array.from({ length: 10 }, () => lead({ email: e })));
    expect(new Set(rs.map((r) => r.body.pipelineItemId)).size).toBe(1);
    expect(await items(rs[0]!.body.id)).toHaveLength(1);
  });

  it('rule 3: a missing pipeline still saves the contact, with warning no_pipeline_found', async () => {
    const e = email();
    const r = await lead({ email: e, pipeline: 'Nope' });
    expect(r.body).toMatchObject({ created: true, pipelineItemId: null, warning: 'no_pipeline_found' });
    expect(await t.sql('select id from contacts where email = ?', [e])).toHaveLength(1);
  });

  it('rule 3: a pipeline without stages gives pipeline_has_no_stages', async () => {
    await pipeline('Empty', []);
    const r = await lead({ email: email(), pipeline: 'Empty' });
    expect(r.body).toMatchObject({ created: true, pipelineItemId: null, warning: 'pipeline_has_no_stages' });
  });

  it('score 0-100 becomes the manual score; out of range and fractions are refused', async () => {
    const r = await lead({ email: email(), score: 77 });
    const [row] = await t.sql<any>('select lead_score, score_override from contacts where id = ?', [r.body.id]);
    expect(row).toEqual({ lead_score: 77, score_override: 77 });
    for (const score of [-1, 101, 50.5, 'high', '80', '']) {
      const bad = await lead({ email: email(), score });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('validation_failed');
      expect(bad.body.issues[0].path).toBe('score');
    }
  });

  it('source and custom follow the contact rules; the identity rule applies', async () => {
    const r = await lead({ email: email(), source: 'webinar', custom: { campaign: 'q4' } });
    const [row] = await t.sql<any>('select source, custom from contacts where id = ?', [r.body.id]);
    expect(row).toEqual({ source: 'webinar', custom: { campaign: 'q4' } });
    const bad = await lead({ source: 'x', pipeline: 'Sales' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('missing_identity');
  });

  it('emits contact.created with source api', async () => {
    const r = await lead({ email: email() });
    const ev = await t.sql<any>(
      `select event, payload->>'source' as source from outbox_events where payload->'data'->'contact'->>'id' = ?`,
      [r.body.id],
    );
    expect(ev).toEqual([{ event: 'contact.created', source: 'api' }]);
  });

  it('a failure after the contact was written rolls everything back: no contact, no event', async () => {
    await t.sql(`create or replace function fail_placement() returns trigger language plpgsql as $$ begin raise exception 'boom'; end $$`);
    await t.sql(`create trigger fail_placement before insert on pipeline_items for each row execute function fail_placement()`);
    try {
      const e = email();
      const before = await t.sql<any>('select count(*)::int as n from outbox_events');
      const r = await lead({ email: e });
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ code: 'save_failed', error: 'Failed to save contact' });
      expect(await t.sql('select id from contacts where email = ?', [e])).toHaveLength(0);
      const after = await t.sql<any>('select count(*)::int as n from outbox_events');
      expect(after[0].n).toBe(before[0].n);
    } finally {
      await t.sql('drop trigger fail_placement on pipeline_items');
    }
  });
});
