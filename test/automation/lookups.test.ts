/**
 * Automation lookups (issue 18, "Automation platforms"): the find-contact search of find-or-create (exact email) and
 * the choices of the actions' dynamic dropdowns (pipelines with stages, tags, companies), over real HTTP with an
 * Internal key, each named in the action and search definitions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { automation } from './support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

type Org = Awaited<ReturnType<TestApp['newOrg']>>;
const get = (org: Org, path: string) => automation(t, 'GET', path, { apiKey: org.internalKey });
/** A URL the definitions give (under BASE_URL), fetched from the test server. */
const fetchDefined = (org: Org, url: string) =>
  automation(t, 'GET', url.replace(`${t.runtime.deps.config.BASE_URL}/integrations/automation`, ''), { apiKey: org.internalKey });

async function createContact(org: Org, body: Record<string, unknown>) {
  const res = await automation(
    t,
    'POST',
    '/actions/create_contact',
    { apiKey: org.internalKey },
    { firstName: 'A', lastName: 'B', ...body },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('find contact', () => {
  it('finds the live contact with exactly this email, trimmed and case-insensitive, in the actions’ contact shape', async () => {
    const org = await t.newOrg();
    await call(t, 'POST', '/companies/upsert', { key: org.publicKey, body: { domain: 'example.com', name: 'Example Inc' } });
    const ada = await createContact(org, { email: 'ada@example.com', firstName: 'Ada', company: 'example.com', tags: 'vip' });
    await createContact(org, { email: 'ada.lovelace@example.com' });
    const found = await get(org, `/contacts/find?email=${encodeURIComponent('  ADA@Example.COM ')}`);
    expect(found).toMatchObject({ status: 200, body: [ada] });
    expect(found.body[0].company).toEqual({ id: expect.any(String), name: 'Example Inc', domain: 'example.com' });
    // A `+` percent-encoded is part of the address; no substring or prefix matches.
    const plus = await createContact(org, { email: 'ada+news@example.com' });
    expect((await get(org, '/contacts/find?email=ada%2Bnews%40example.com')).body).toEqual([plus]);
    for (const email of ['ada@example.co', 'da@example.com', 'nobody@example.com']) {
      expect(await get(org, `/contacts/find?email=${email}`), email).toMatchObject({ status: 200, body: [] });
    }
  });

  it('finds nothing (an empty list, not 404) for a trashed contact or one of another organization', async () => {
    const org = await t.newOrg();
    const other = await t.newOrg();
    const gone = await createContact(org, { email: 'gone@example.com' });
    await createContact(other, { email: 'theirs@example.com' });
    const del = await fetch(`${t.origin}/api/contacts/${gone.id}/delete`, { method: 'POST', headers: { 'x-api-key': org.internalKey } });
    expect(del.status).toBe(200);
    expect(await get(org, '/contacts/find?email=gone@example.com')).toMatchObject({ status: 200, body: [] });
    expect(await get(org, '/contacts/find?email=theirs@example.com')).toMatchObject({ status: 200, body: [] });
  });

  it('refuses a missing or malformed email, a raw +, and unknown parameters with 400 naming them; needs an Internal key', async () => {
    const org = await t.newOrg();
    for (const [query, path, message] of [
      ['', 'email', /^email is required$/],
      ['email=', 'email', /^email is required$/],
      ['email=not-an-email', 'email', /email must be a valid email address/],
      ['email=ada+news@example.com', 'email', /send '\+' as %2B/],
      ['email=ada@example.com&q=ada', 'q', /unknown query parameter "q"/],
    ] as const) {
      const res = await get(org, `/contacts/find?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe('validation_failed');
      expect(res.body.issues[0], query).toMatchObject({ path, message: expect.stringMatching(message) });
    }
    expect((await automation(t, 'GET', '/contacts/find?email=a@example.com', { apiKey: org.publicKey })).status).toBe(403);
    expect((await automation(t, 'GET', '/contacts/find?email=a@example.com', null)).status).toBe(401);
  });

  it('is listed among the searches, pairing with create_contact, at a URL that works', async () => {
    const org = await t.newOrg();
    const ada = await createContact(org, { email: 'ada@example.com' });
    const res = await get(org, '/searches');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        key: 'find_contact',
        label: 'Find contact',
        description: expect.any(String),
        url: `${t.runtime.deps.config.BASE_URL}/integrations/automation/contacts/find`,
        inputs: [{ key: 'email', label: 'Email', required: true, list: false, description: expect.any(String), dropdown: null }],
        createAction: 'create_contact',
      },
    ]);
    expect((await fetchDefined(org, `${res.body[0].url}?email=ada@example.com`)).body).toEqual([ada]);
  });
});

describe('dropdowns', () => {
  it('names in the action definitions which dropdown feeds which input, at URLs that work', async () => {
    const org = await t.newOrg();
    const res = await get(org, '/actions');
    const fed = res.body.flatMap((a: { key: string; inputs: { key: string; dropdown: null | Record<string, string> }[] }) =>
      a.inputs.filter((i) => i.dropdown).map((i) => [`${a.key}.${i.key}`, i.dropdown!.source, i.dropdown!.value, i.dropdown!.label]),
    );
    expect(fed).toEqual([
      ['create_contact.company', 'companies', 'domain', 'label'],
      ['create_contact.tags', 'tags', 'id', 'name'],
      ['update_contact.company', 'companies', 'domain', 'label'],
      ['create_deal.pipelineId', 'pipelines', 'id', 'name'],
      ['add_tag.tags', 'tags', 'id', 'name'],
    ]);
    const pipelineInput = res.body
      .find((a: { key: string }) => a.key === 'create_deal')
      .inputs.find((i: { key: string }) => i.key === 'pipelineId');
    const pipelines = await fetchDefined(org, pipelineInput.dropdown.url);
    expect(pipelines.status).toBe(200);
    expect(pipelines.body.length).toBeGreaterThan(0);
  });

  it('pipelines: every pipeline of the organization with its stages in board order; a choice runs create_deal', async () => {
    const org = await t.newOrg();
    const created = await fetch(`${t.origin}/api/pipelines`, {
      method: 'POST',
      headers: { 'x-api-key': org.internalKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Partners', stages: ['Intro', 'Signed'] }),
    });
    expect(created.status).toBe(201);
    const res = await get(org, '/dropdowns/pipelines');
    expect(res.status).toBe(200);
    const app = await fetch(`${t.origin}/api/pipelines`, { headers: { 'x-api-key': org.internalKey } });
    expect(res.body).toEqual(((await app.json()) as { items: unknown[] }).items);
    const partners = res.body.find((p: { name: string }) => p.name === 'Partners');
    expect(partners.stages.map((s: { name: string; position: number }) => [s.name, s.position])).toEqual([
      ['Intro', 0],
      ['Signed', 1],
    ]);
    const contact = await createContact(org, { email: 'deal@example.com' });
    const deal = await automation(
      t,
      'POST',
      '/actions/create_deal',
      { apiKey: org.internalKey },
      { contactId: contact.id, pipelineId: partners.id },
    );
    expect(deal).toMatchObject({ status: 201, body: { stageId: partners.stages[0].id } });
    expect((await get(await t.newOrg(), '/dropdowns/pipelines')).body.map((p: { id: string }) => p.id)).not.toContain(partners.id);
  });

  it("tags: the live contacts' tags, one per spelling ignoring case, most used first; never trashed or another organization's", async () => {
    const org = await t.newOrg();
    const other = await t.newOrg();
    await createContact(org, { email: 'a@example.com', tags: ['vip', 'webinar'] });
    await createContact(org, { email: 'b@example.com', tags: ['VIP', 'newsletter'] });
    await createContact(org, { email: 'c@example.com', tags: ['vip'] });
    await createContact(org, { email: 'd@example.com' });
    const trashed = await createContact(org, { email: 'e@example.com', tags: ['secret-trashed'] });
    await fetch(`${t.origin}/api/contacts/${trashed.id}/delete`, { method: 'POST', headers: { 'x-api-key': org.internalKey } });
    await createContact(other, { email: 'x@example.com', tags: ['other-org'] });
    const res = await get(org, '/dropdowns/tags');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: 'VIP', name: 'VIP', contacts: 3 },
      { id: 'newsletter', name: 'newsletter', contacts: 1 },
      { id: 'webinar', name: 'webinar', contacts: 1 },
    ]);
    expect(await get(await t.newOrg(), '/dropdowns/tags')).toMatchObject({ status: 200, body: [] });
  });

  it('companies: pages in domain order after the last domain, labelled, with a value create_contact.company takes', async () => {
    const org = await t.newOrg();
    for (const [domain, name] of [
      ['zeta.example', 'Zeta'],
      ['alpha.example', 'Alpha'],
      ['mid.example', null],
    ] as const) {
      const res = await call(t, 'POST', '/companies/upsert', { key: org.publicKey, body: { domain, ...(name ? { name } : {}) } });
      expect(res.status).toBeLessThan(300);
    }
    await call(t, 'POST', '/companies/upsert', { key: (await t.newOrg()).publicKey, body: { domain: 'other.example' } });
    const first = await get(org, '/dropdowns/companies?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toEqual([
      { id: expect.any(String), domain: 'alpha.example', name: 'Alpha', label: 'Alpha (alpha.example)' },
      { id: expect.any(String), domain: 'mid.example', name: null, label: 'mid.example' },
    ]);
    const next = await get(org, `/dropdowns/companies?limit=2&after=${first.body[1].domain}`);
    expect(next.body.map((c: { domain: string }) => c.domain)).toEqual(['zeta.example']);
    expect((await get(org, '/dropdowns/companies')).body).toHaveLength(3);
    expect((await get(org, '/dropdowns/companies?after=zeta.example')).body).toEqual([]);
    const contact = await createContact(org, { email: 'co@example.com', company: first.body[0].domain });
    expect(contact.company).toMatchObject({ id: first.body[0].id, domain: 'alpha.example' });
  });

  it('refuses unknown parameters and bad limits with 400 naming them; needs an Internal key (X-Api-Key or Bearer)', async () => {
    const org = await t.newOrg();
    for (const [path, issuePath, message] of [
      ['/dropdowns/pipelines?name=Sales', 'name', /unknown query parameter "name"/],
      ['/dropdowns/tags?q=vip', 'q', /unknown query parameter "q"/],
      ['/dropdowns/companies?q=acme', 'q', /unknown query parameter "q"/],
      ['/dropdowns/companies?limit=101', 'limit', /limit may be at most 100/],
      ['/dropdowns/companies?limit=0', 'limit', /limit must be at least 1/],
    ] as const) {
      const res = await get(org, path);
      expect(res.status, path).toBe(400);
      expect(res.body.code, path).toBe('validation_failed');
      expect(res.body.issues[0], path).toMatchObject({ path: issuePath, message: expect.stringMatching(message) });
    }
    for (const path of ['/dropdowns/pipelines', '/dropdowns/tags', '/dropdowns/companies', '/contacts/find?email=a@example.com']) {
      expect((await automation(t, 'GET', path, { bearer: org.internalKey })).status, path).toBe(200);
      expect((await automation(t, 'GET', path, { apiKey: org.publicKey })).status, path).toBe(403);
      expect((await automation(t, 'GET', path, null)).status, path).toBe(401);
    }
  });
});
