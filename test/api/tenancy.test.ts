/**
 * Tenancy: a key of organization A never reads or changes a row of organization B, even when it names B's ids,
 * emails, domains or pipelines. B's rows are compared before and after through SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let a: Awaited<ReturnType<TestApp['newOrg']>>;
let b: Awaited<ReturnType<TestApp['newOrg']>>;
/** B's records, made through B's own key. */
let bContactId: string;
let bNamedContactId: string;
let bCompanyId: string;
let bSnapshot: string;

/** Every row of organization B that this file could touch, as one comparable string. */
async function snapshotOf(orgId: string): Promise<string> {
  const tables = ['contacts', 'companies', 'notes', 'pipelines', 'pipeline_stages', 'pipeline_items'];
  const parts = await Promise.all(tables.map((table) => t.sql(`select * from ${table} where organization_id = ? order by id`, [orgId])));
  return JSON.stringify(parts);
}

beforeAll(async () => {
  t = await initTestApp();
  a = await t.newOrg();
  b = await t.newOrg();
  const key = b.publicKey;
  const company = await call(t, 'POST', '/companies/upsert', { key, body: { domain: 'b-only.example', name: 'B Only' } });
  bCompanyId = company.body.id;
  expect((await call(t, 'POST', '/companies/upsert', { key, body: { domain: 'shared.example', name: 'B Shared' } })).status).toBe(200);
  const contact = await call(t, 'POST', '/contacts/upsert', {
    key,
    body: {
      email: 'b-person@example.com',
      firstName: 'Bea',
      lastName: 'Bee',
      phone: '555-0100',
      title: 'CEO',
      tags: ['b'],
      custom: { org: 'B' },
      companyDomain: 'b-only.example',
    },
  });
  bContactId = contact.body.id;
  const named = await call(t, 'POST', '/contacts/upsert', {
    key,
    body: { companyDomain: 'shared.example', firstName: 'Nia', lastName: 'Named' },
  });
  bNamedContactId = named.body.id;
  expect((await call(t, 'POST', `/contacts/${bContactId}/notes`, { key, body: { body: 'B private note' } })).status).toBe(201);
  // The API has no pipeline writes; B's extra pipeline is made directly.
  const [pipeline] = await t.sql<{ id: string }>(
    `insert into pipelines (organization_id, name) values (?, 'B Secret Pipeline') returning id`,
    [b.orgId],
  );
  await t.sql(`insert into pipeline_stages (organization_id, pipeline_id, name, position) values (?, ?, 'Only', 0)`, [
    b.orgId,
    pipeline!.id,
  ]);
  expect(
    (await call(t, 'POST', '/leads', { key, body: { email: 'b-person@example.com', pipeline: 'B Secret Pipeline' } })).body.warning,
  ).toBeNull();
  bSnapshot = await snapshotOf(b.orgId);
});
afterAll(async () => t?.close());

/** Each test ends by proving B saw no change at all. */
async function expectBUntouched() {
  expect(await snapshotOf(b.orgId)).toBe(bSnapshot);
}

describe('a key of organization A', () => {
  it("cannot find B's contact by email", async () => {
    for (const email of ['b-person@example.com', 'B-PERSON@example.com']) {
      const r = await call(t, 'GET', `/contacts/search?email=${encodeURIComponent(email)}`, { key: a.publicKey });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: expect.any(String), code: 'not_found' });
      expect(JSON.stringify(r.body)).not.toContain(bContactId);
    }
    // B's own key finds it: the 404 above is tenancy, not a broken search.
    expect((await call(t, 'GET', '/contacts/search?email=b-person@example.com', { key: b.publicKey })).status).toBe(200);
  });

  it("cannot add a note to B's contact by id, and learns nothing from trying", async () => {
    const r = await call(t, 'POST', `/contacts/${bContactId}/notes`, { key: a.publicKey, body: { body: 'A was here' } });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
    const unknown = await call(t, 'POST', '/contacts/00000000-0000-4000-8000-000000000001/notes', {
      key: a.publicKey,
      body: { body: 'A was here' },
    });
    // A foreign id and a non-existent id look the same.
    expect(unknown.status).toBe(r.status);
    expect(Object.keys(unknown.body).sort()).toEqual(Object.keys(r.body).sort());
    expect(await t.sql(`select 1 from notes where body = 'A was here'`)).toHaveLength(0);
    await expectBUntouched();
  });

  it("creates its own contact when upserting B's email, leaving B's unchanged", async () => {
    const r = await call(t, 'POST', '/contacts/upsert', {
      key: a.publicKey,
      body: { email: 'b-person@example.com', firstName: 'Hijack', phone: '000', tags: ['a'], custom: { org: 'A' } },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: true, matchedBy: null });
    expect(r.body.id).not.toBe(bContactId);
    const [row] = await t.sql<{ organization_id: string; first_name: string }>(
      'select organization_id, first_name from contacts where id = ?',
      [r.body.id],
    );
    expect(row).toEqual({ organization_id: a.orgId, first_name: 'Hijack' });
    // Batch and lead paths match on email too: still A's own contact.
    const batch = await call(t, 'POST', '/contacts/batch-upsert', {
      key: a.publicKey,
      body: { contacts: [{ email: 'b-person@example.com', lastName: 'Batch' }] },
    });
    expect(batch.body.results[0]).toMatchObject({ ok: true, id: r.body.id });
    const lead = await call(t, 'POST', '/leads', { key: a.publicKey, body: { email: 'b-person@example.com', score: 99 } });
    expect(lead.body.id).toBe(r.body.id);
    await expectBUntouched();
  });

  it('cannot link to a company that exists only in B: 422 company_not_found', async () => {
    const r = await call(t, 'POST', '/contacts/upsert', {
      key: a.publicKey,
      body: { email: 'a-link@example.com', companyDomain: 'b-only.example' },
    });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ error: expect.any(String), code: 'company_not_found', domain: 'b-only.example' });
    expect(JSON.stringify(r.body)).not.toContain(bCompanyId);
    const lead = await call(t, 'POST', '/leads', {
      key: a.publicKey,
      body: { email: 'a-link@example.com', companyDomain: 'https://www.B-only.example/about' },
    });
    expect(lead.status).toBe(422);
    expect(await t.sql(`select 1 from contacts where email = 'a-link@example.com'`)).toHaveLength(0);
    await expectBUntouched();
  });

  it("never matches B's contact by name at a domain both organizations have", async () => {
    expect(
      (await call(t, 'POST', '/companies/upsert', { key: a.publicKey, body: { domain: 'shared.example', name: 'A Shared' } })).body.created,
    ).toBe(true);
    const r = await call(t, 'POST', '/contacts/upsert', {
      key: a.publicKey,
      body: { companyDomain: 'shared.example', firstName: 'Nia', lastName: 'Named', phone: '1' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: true, matchedBy: null });
    expect(r.body.id).not.toBe(bNamedContactId);
    await expectBUntouched();
  });

  it("upserts its own company on B's domain", async () => {
    const r = await call(t, 'POST', '/companies/upsert', { key: a.publicKey, body: { domain: 'b-only.example', name: 'A Copy' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: true, domain: 'b-only.example' });
    expect(r.body.id).not.toBe(bCompanyId);
    await expectBUntouched();
  });

  it("does not see B's pipeline: no_pipeline_found, and the contact is saved in A", async () => {
    const r = await call(t, 'POST', '/leads', { key: a.publicKey, body: { email: 'a-lead@example.com', pipeline: 'B Secret Pipeline' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: true, pipelineItemId: null, warning: 'no_pipeline_found' });
    const [row] = await t.sql<{ organization_id: string }>('select organization_id from contacts where id = ?', [r.body.id]);
    expect(row!.organization_id).toBe(a.orgId);
    // A's default pipeline still works for A.
    const own = await call(t, 'POST', '/leads', { key: a.publicKey, body: { email: 'a-lead@example.com' } });
    expect(own.body.warning).toBeNull();
    const [item] = await t.sql<{ organization_id: string }>('select organization_id from pipeline_items where id = ?', [
      own.body.pipelineItemId,
    ]);
    expect(item!.organization_id).toBe(a.orgId);
    await expectBUntouched();
  });

  it("has B's data untouched after everything A did", async () => {
    await expectBUntouched();
    const s = await call(t, 'GET', '/contacts/search?email=b-person@example.com', { key: b.publicKey });
    expect(s.body).toMatchObject({ id: bContactId, firstName: 'Bea', phone: '555-0100', jobTitle: 'CEO', tags: ['b'] });
  });
});
