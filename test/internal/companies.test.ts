import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, refusal, rest, type TestOrg } from './contacts-support.ts';

/** Companies on the application surface: create, list newest first with `q`, get. */

let t: TestApp;
let org: TestOrg;
let other: TestOrg;
beforeAll(async () => {
  t = await initTestApp();
  org = await newTestOrg(t);
  other = await newTestOrg(t);
});
afterAll(async () => t?.close());

describe('POST /api/companies', () => {
  it('creates a company on its normalised domain (201), for any member, and emits no event', async () => {
    t.clock.freeze(new Date('2026-11-20T10:00:00.000Z'));
    const r = await rest(t, 'POST', '/companies', org.memberKey, {
      domain: 'https://www.Acme-Widgets.com/about',
      name: 'Acme Widgets',
      industry: 'Manufacturing',
      size: '11-50',
      custom: { tier: 'gold', gone: null },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      domain: 'acme-widgets.com',
      name: 'Acme Widgets',
      industry: 'Manufacturing',
      size: '11-50',
      custom: { tier: 'gold' },
      createdAt: '2026-11-20T10:00:00.000Z',
      updatedAt: '2026-11-20T10:00:00.000Z',
    });
    expect(await t.sql('select id from outbox_events where organization_id = ?', [org.orgId])).toEqual([]);
    // The typed client reaches the same procedure.
    const typed = await org.session.companies.create.mutate({ domain: 'typed.example' });
    expect(typed).toMatchObject({ domain: 'typed.example', name: null });
  });

  it('answers 409 company_exists with the existing id when the domain is taken, whatever its spelling, and changes nothing', async () => {
    const first = await rest(t, 'POST', '/companies', org.ownerKey, { domain: 'taken.example', name: 'First' });
    const again = await rest(t, 'POST', '/companies', org.memberKey, { domain: 'HTTPS://WWW.TAKEN.EXAMPLE/', name: 'Second' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      error: 'A company with domain taken.example already exists',
      code: 'company_exists',
      existingCompanyId: first.body.id,
    });
    expect((await rest(t, 'GET', `/companies/${first.body.id}`, org.ownerKey)).body.name).toBe('First');
    // Another organization has its own companies.
    expect((await rest(t, 'POST', '/companies', other.ownerKey, { domain: 'taken.example' })).status).toBe(201);
  });

  it('creates one company when many create the same domain at once', async () => {
    const rs = await Promise.all(Array.from({ length: 8 }, () => rest(t, 'POST', '/companies', org.ownerKey, { domain: 'race.example' })));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 409).map((r) => r.body.existingCompanyId)).toEqual(
      Array(7).fill(rs.find((r) => r.status === 201)!.body.id),
    );
  });

  it('refuses what is no domain, and other bad input, with 400 naming the field', async () => {
    for (const body of [
      { domain: 'localhost' },
      { domain: '10.0.0.1' },
      { domain: '' },
      { name: 'No domain' },
      { domain: 'x.com', name: 5 },
      { domain: 'x.com', custom: [] },
    ]) {
      const r = await rest(t, 'POST', '/companies', org.ownerKey, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.issues[0].path).toMatch(/^(domain|name|custom)$/);
    }
  });

  it('is refused to a Public API key (403 wrong_api_surface) and without credentials (401)', async () => {
    expect((await rest(t, 'POST', '/companies', org.publicKey, { domain: 'public.example' })).body.code).toBe('wrong_api_surface');
    expect((await rest(t, 'GET', '/companies', org.publicKey)).body.code).toBe('wrong_api_surface');
    expect((await rest(t, 'GET', `/companies/${randomUUID()}`, org.publicKey)).body.code).toBe('wrong_api_surface');
    expect((await rest(t, 'GET', '/companies', 'nothing')).status).toBe(401);
  });
});

describe('GET /api/companies and /api/companies/{id}', () => {
  let o: TestOrg;
  beforeAll(async () => {
    o = await newTestOrg(t);
    for (let i = 1; i <= 12; i++) {
      t.clock.freeze(new Date(Date.UTC(2026, 10, 1, 0, i)));
      const name = i % 3 === 0 ? `Globex ${i}` : `Initech ${i}`;
      expect((await rest(t, 'POST', '/companies', o.memberKey, { domain: `c${i}.example`, name })).status).toBe(201);
    }
    await rest(t, 'POST', '/companies', other.ownerKey, { domain: 'globex-other.example', name: 'Globex elsewhere' });
  });

  it('lists newest first in cursor pages without repeats or gaps, only the organization’s own', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await rest(t, 'GET', `/companies?limit=5${cursor ? `&cursor=${cursor}` : ''}`, o.ownerKey);
      expect(r.status).toBe(200);
      seen.push(...r.body.items.map((c: { domain: string }) => c.domain));
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `c${12 - i}.example`));
  });

  it('filters on q, a case-insensitive substring of the name or the domain, wildcards taken literally', async () => {
    const domains = async (q: string) =>
      (await rest(t, 'GET', `/companies?q=${encodeURIComponent(q)}`, o.ownerKey)).body.items.map((c: { domain: string }) => c.domain);
    expect(await domains('GLOBEX')).toEqual(['c12.example', 'c9.example', 'c6.example', 'c3.example']);
    expect(await domains('c1')).toEqual(['c12.example', 'c11.example', 'c10.example', 'c1.example']);
    expect(await domains('%')).toEqual([]);
    expect(await domains('_')).toEqual([]);
    expect(await domains("' or 1=1 --")).toEqual([]);
  });

  it('gets a company by id; 404 for unknown and foreign ids, 400 for what is no id', async () => {
    const [{ id } = { id: '' }] = (await rest(t, 'GET', '/companies?limit=1', o.ownerKey)).body.items;
    expect((await rest(t, 'GET', `/companies/${id}`, o.memberKey)).body).toMatchObject({ id, domain: 'c12.example' });
    const foreign = (await rest(t, 'GET', '/companies?limit=1', other.ownerKey)).body.items[0].id;
    for (const missing of [randomUUID(), foreign]) {
      expect(await rest(t, 'GET', `/companies/${missing}`, o.ownerKey)).toEqual({
        status: 404,
        body: { error: `No company with id ${missing}`, code: 'not_found' },
      });
    }
    expect((await rest(t, 'GET', '/companies/nope', o.ownerKey)).status).toBe(400);
    expect(await refusal(o.member.companies.get.query({ id: randomUUID() }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('refuses bad limits and cursors with 400', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=x', `cursor=nope`]) {
      const r = await rest(t, 'GET', `/companies?${q}`, o.ownerKey);
      expect(r.status, q).toBe(400);
    }
    // A cursor of another organization is refused, as one of nothing is, without revealing where it sorts.
    const foreign = (await rest(t, 'GET', '/companies?limit=1', other.ownerKey)).body.items[0].id;
    expect(await rest(t, 'GET', `/companies?cursor=${foreign}`, o.ownerKey)).toMatchObject({
      status: 400,
      body: { code: 'invalid_cursor' },
    });
  });
});
