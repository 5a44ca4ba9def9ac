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

describe('POST /v1/companies/upsert', () => {
  it('creates then updates on the normalised domain, overwriting only sent fields', async () => {
    const a = await call(t, 'POST', '/companies/upsert', {
      key,
      body: { domain: 'https://www.Globex.com:443/about?x=1', name: 'Globex', industry: 'Energy', custom: { a: 1, b: 2 } },
    });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ id: expect.any(String), created: true, domain: 'globex.com' });
    const b = await call(t, 'POST', '/companies/upsert', {
      key,
      body: { domain: 'GLOBEX.com', size: '51-200', industry: null, custom: { b: null, c: 3 } },
    });
    expect(b.body).toEqual({ id: a.body.id, created: false, domain: 'globex.com' });
    const [row] = await t.sql<any>('select domain, name, industry, size, custom from companies where id = ?', [a.body.id]);
    expect(row).toEqual({ domain: 'globex.com', name: 'Globex', industry: null, size: '51-200', custom: { a: 1, c: 3 } });
    expect(await t.sql('select id from companies where organization_id = ?', [orgId])).toHaveLength(1);
  });

  it.each(['localhost', 'not a domain', '10.0.0.1', 'http://', 'nodot'])('refuses %j with a clear 400', async (domain) => {
    const r = await call(t, 'POST', '/companies/upsert', { key, body: { domain, name: 'X' } });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'validation_failed', issues: [{ path: 'domain', message: expect.stringContaining('domain') }] });
  });

  it('requires a domain', async () => {
    const r = await call(t, 'POST', '/companies/upsert', { key, body: { name: 'No domain' } });
    expect(r.status).toBe(400);
    expect(r.body.issues[0].path).toBe('domain');
  });

  it('concurrent upserts of one domain create one company', async () => {
    const rs = await Promise.all(
      Array.from({ length: 20 }, () => call(t, 'POST', '/companies/upsert', { key, body: { domain: 'race.io' } })),
    );
    expect(new Set(rs.map((r) => r.body.id)).size).toBe(1);
    expect(rs.filter((r) => r.body.created)).toHaveLength(1);
  });
});

describe('POST /v1/contacts/{id}/notes', () => {
  it('adds a note: 201 with { id, contactId, body, createdAt }', async () => {
    const c = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'noted@example.com' } });
    const r = await call(t, 'POST', `/contacts/${c.body.id}/notes`, { key, body: { body: '  Called, wants a demo  ' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      contactId: c.body.id,
      body: 'Called, wants a demo',
      createdAt: expect.stringMatching(/Z$/),
    });
    const rows = await t.sql<any>('select body, organization_id from notes where contact_id = ?', [c.body.id]);
    expect(rows).toEqual([{ body: 'Called, wants a demo', organization_id: orgId }]);
  });

  it('404 for an unknown contact, a trashed one, and 400 for a malformed id or empty body', async () => {
    const unknown = await call(t, 'POST', '/contacts/00000000-0000-4000-8000-000000000000/notes', { key, body: { body: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    const c = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'trashed@example.com' } });
    await t.sql('update contacts set deleted_at = now() where id = ?', [c.body.id]);
    expect((await call(t, 'POST', `/contacts/${c.body.id}/notes`, { key, body: { body: 'x' } })).status).toBe(404);
    const bad = await call(t, 'POST', '/contacts/not-a-uuid/notes', { key, body: { body: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toBe('id');
    const c2 = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'empty-note@example.com' } });
    const empty = await call(t, 'POST', `/contacts/${c2.body.id}/notes`, { key, body: { body: '   ' } });
    expect(empty.status).toBe(400);
    expect(empty.body.issues[0].path).toBe('body');
  });
});
