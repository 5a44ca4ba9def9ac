import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

/** GET /v1/companies, /v1/companies/{id} and /v1/companies/search?domain=: the company read side. */

let t: TestApp;
let key: string;
let internalKey: string;
let orgId: string;
let otherKey: string;
beforeAll(async () => {
  t = await initTestApp();
  ({ publicKey: key, internalKey, orgId } = await t.newOrg());
  ({ publicKey: otherKey } = await t.newOrg());
});
afterAll(async () => t?.close());

async function walk(k: string, query: Record<string, string>, onPage?: (n: number) => Promise<void>) {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
    const r = await call(t, 'GET', `/companies?${q}`, { key: k });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(...r.body.items.map((c: { id: string }) => c.id));
    cursor = r.body.nextCursor;
    await onPage?.(++pages);
  } while (cursor);
  return ids;
}

describe('GET /v1/companies/{id} and /v1/companies/search', () => {
  it('answers the company as stored, found by id or by any form of its domain', async () => {
    t.clock.freeze(new Date('2026-04-01T08:00:00.000Z'));
    const up = await call(t, 'POST', '/companies/upsert', {
      key,
      body: { domain: 'https://www.Initech.com/about', name: 'Initech', industry: 'Software', size: '51-200', custom: { tier: 'gold' } },
    });
    const company = {
      id: up.body.id,
      domain: 'initech.com',
      name: 'Initech',
      industry: 'Software',
      size: '51-200',
      custom: { tier: 'gold' },
      createdAt: '2026-04-01T08:00:00.000Z',
      updatedAt: '2026-04-01T08:00:00.000Z',
    };
    expect(await call(t, 'GET', `/companies/${up.body.id}`, { key })).toMatchObject({ status: 200, body: company });
    for (const domain of ['initech.com', 'WWW.INITECH.COM', 'http://initech.com:8080/x?y=1']) {
      const r = await call(t, 'GET', `/companies/search?domain=${encodeURIComponent(domain)}`, { key });
      expect(r, domain).toMatchObject({ status: 200, body: company });
    }
  });

  it('is 404 for unknown ids and domains and for another organization’s company; 400 for what is no id or domain', async () => {
    const theirs = await call(t, 'POST', '/companies/upsert', { key: otherKey, body: { domain: 'theirs.example' } });
    for (const path of [
      `/companies/${randomUUID()}`,
      `/companies/${theirs.body.id}`,
      '/companies/search?domain=theirs.example',
      '/companies/search?domain=nobody.example',
    ]) {
      const r = await call(t, 'GET', path, { key });
      expect(r.status, path).toBe(404);
      expect(r.body.code).toBe('not_found');
    }
    expect((await call(t, 'GET', '/companies/search?domain=nobody.example', { key })).body.error).toBe(
      'No company with domain nobody.example',
    );
    for (const path of [
      '/companies/not-a-uuid',
      '/companies/search?domain=localhost',
      '/companies/search?domain=10.0.0.1',
      `/companies/search?domain=${encodeURIComponent("x' or '1'='1")}`,
      `/companies/search?domain=${'a'.repeat(3000)}.com`,
      '/companies/search',
    ]) {
      const r = await call(t, 'GET', path, { key });
      expect(r.status, path).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
  });
});

describe('GET /v1/companies', () => {
  it('pages in (updatedAt, id) order, without repeats or gaps, from updatedSince, and a company changed while paging comes again', async () => {
    const o = await t.newOrg();
    await t.sql(
      `insert into companies (organization_id, domain, created_at, updated_at)
       select ?, 'co' || g || '.paging.example', '2026-01-01Z', '2026-02-01T00:00:00.000001Z'::timestamptz + (g % 3) * interval '1 microsecond'
       from generate_series(1, 33) g`,
      [o.orgId],
    );
    const rows = await t.sql<{ id: string; domain: string }>(
      'select id, domain from companies where organization_id = ? order by updated_at, id',
      [o.orgId],
    );
    const expected = rows.map((r) => r.id);
    expect(await walk(o.publicKey, { limit: '7' })).toEqual(expected);

    const moved = rows[2]!;
    const ids = await walk(o.publicKey, { limit: '10' }, async (page) => {
      if (page !== 1) return;
      t.clock.freeze(new Date('2026-06-01T00:00:00Z'));
      expect((await call(t, 'POST', '/companies/upsert', { key: o.publicKey, body: { domain: moved.domain, name: 'Moved' } })).status).toBe(
        200,
      );
    });
    expect(ids).toHaveLength(34);
    expect(ids.at(-1)).toBe(moved.id);
    expect(new Set(ids)).toEqual(new Set(expected));

    const since = await call(t, 'GET', '/companies?updatedSince=2026-05-31T23:59:59.999999Z', { key: o.publicKey });
    expect(since.body).toEqual({
      items: [expect.objectContaining({ id: moved.id, name: 'Moved', updatedAt: '2026-06-01T00:00:00.000Z' })],
      nextCursor: null,
    });
    // Other organizations' companies are not listed.
    expect(ids).not.toContain((await call(t, 'GET', '/companies/search?domain=initech.com', { key })).body.id);
  });

  it('refuses bad limits, cursors, updatedSince and unknown parameters with 400', async () => {
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=x',
      'updatedSince=2026-02-30T00:00:00Z',
      'updatedSince=%27%3B%20drop%20table%20companies',
      'domain=x.com',
    ]) {
      const r = await call(t, 'GET', `/companies?${q}`, { key });
      expect(r.status, q).toBe(400);
      expect(r.body.code, q).toBe('validation_failed');
    }
    const r = await call(t, 'GET', '/companies?cursor=bm90LWEtY3Vyc29y', { key });
    expect(r).toMatchObject({ status: 400, body: { code: 'invalid_cursor' } });
    expect((await call(t, 'GET', '/companies?limit=100', { key })).status).toBe(200);
  });
});

describe('cursors of the two sync lists', () => {
  it('refuses the crafted year-0 cursor on both lists (400 invalid_cursor, not a 500 from PostgreSQL)', async () => {
    const crafted = Buffer.from(JSON.stringify(['s1', '0000-01-01T00:00:00.000000Z', '00000000-0000-0000-0000-000000000000'])).toString(
      'base64url',
    );
    for (const list of ['contacts', 'companies']) {
      const r = await call(t, 'GET', `/${list}?cursor=${crafted}`, { key });
      expect(r, list).toMatchObject({ status: 400, body: { code: 'invalid_cursor' } });
    }
  });

  it('each list refuses the other’s cursor instead of paging from its position', async () => {
    const { publicKey: own } = await t.newOrg();
    for (const n of [1, 2]) {
      await call(t, 'POST', '/contacts/upsert', { key: own, body: { email: `cursor-${n}@example.com` } });
      await call(t, 'POST', '/companies/upsert', { key: own, body: { domain: `cursor-${n}.example` } });
    }
    const next = async (list: string) => (await call(t, 'GET', `/${list}?limit=1`, { key: own })).body.nextCursor as string;
    const [contacts, companies] = [await next('contacts'), await next('companies')];
    expect(contacts).toEqual(expect.any(String));
    expect((await call(t, 'GET', `/contacts?limit=1&cursor=${contacts}`, { key: own })).status).toBe(200);
    for (const [list, cursor] of [
      ['companies', contacts],
      ['contacts', companies],
    ] as const) {
      const r = await call(t, 'GET', `/${list}?limit=1&cursor=${cursor}`, { key: own });
      expect(r, list).toMatchObject({ status: 400, body: { code: 'invalid_cursor' } });
    }
  });
});

describe('who may read companies', () => {
  it('needs companies:read (403 insufficient_scope naming it); an Internal key is the wrong surface', async () => {
    const [{ id: userId } = { id: '' }] = await t.sql<{ id: string }>('select id from users where organization_id = ? limit 1', [orgId]);
    const writer = await t.newKey({ orgId, userId, name: 'writer', type: 'public', permissions: ['companies:write', 'contacts:read'] });
    for (const path of ['/companies', `/companies/${randomUUID()}`, '/companies/search?domain=initech.com']) {
      const r = await call(t, 'GET', path, { key: writer });
      expect(r.status, path).toBe(403);
      expect(r.body).toMatchObject({ code: 'insufficient_scope', required: 'companies:read' });
      expect((await call(t, 'GET', path, { key: internalKey })).body.code).toBe('wrong_api_surface');
    }
  });
});
