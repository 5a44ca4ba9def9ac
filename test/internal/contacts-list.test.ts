import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, refusal, rest, type TestOrg } from './contacts-support.ts';

let t: TestApp;
let org: TestOrg;
let other: TestOrg;

interface Seed {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string;
  lead_score: number;
  created_at: string;
  updated_at: string;
  stage: string;
  source: string;
  tags: string[];
}

const seeds: Seed[] = [];
const TOTAL = 60;

/**
 * Sixty contacts with many ties (five creation instants, three scores, repeated and missing names) so that only the
 * id tiebreak makes the order total, and creation instants a microsecond apart, which a JS Date cannot tell apart.
 */
function seedRows(orgId: string): Seed[] {
  const lasts = [null, 'Adams', 'adams', 'Baker', 'clark'];
  const firsts = [null, 'Amy', 'bob'];
  const instants = [
    '2026-01-01T00:00:00.000001Z',
    '2026-01-01T00:00:00.000002Z',
    '2026-01-02T00:00:00.000000Z',
    '2026-01-03T12:00:00.500000Z',
    '2026-01-04T00:00:00.000000Z',
  ];
  return Array.from({ length: TOTAL }, (_, i) => ({
    id: randomUUID(),
    first_name: firsts[i % 3]!,
    last_name: lasts[i % 5]!,
    email: `person${i}@${orgId.slice(0, 8)}.example`,
    lead_score: [0, 10, 25][i % 3]!,
    created_at: instants[(i * 7) % 5]!,
    updated_at: `2026-02-01T00:00:${String(i % 13).padStart(2, '0')}.000000Z`,
    stage: i % 4 === 0 ? 'customer' : 'lead',
    source: i % 6 === 0 ? 'webinar' : 'api',
    tags: i % 5 === 0 ? ['VIP'] : [],
  }));
}

beforeAll(async () => {
  t = await initTestApp();
  [org, other] = await Promise.all([newTestOrg(t), newTestOrg(t)]);
  seeds.push(...seedRows(org.orgId));
  await t.sql(
    `insert into contacts (id, organization_id, first_name, last_name, email, lead_score, created_at, updated_at, stage, source, tags)
     select v.id, ?, v.first_name, v.last_name, v.email, v.lead_score, v.created_at, v.updated_at, v.stage, v.source, v.tags
     from jsonb_to_recordset(?::jsonb) as v(id uuid, first_name text, last_name text, email text, lead_score int,
       created_at timestamptz, updated_at timestamptz, stage text, source text, tags text[])`,
    [org.orgId, JSON.stringify(seeds)],
  );
  // Trashed contacts and other organizations' contacts never show.
  await t.sql(`insert into contacts (organization_id, first_name, deleted_at) values (?, 'Trashed', now())`, [org.orgId]);
  await other.owner.contacts.create.mutate({ firstName: 'Amy', lastName: 'Adams' });
});
afterAll(async () => t?.close());

const cmp = (x: string | number, y: string | number) => (x < y ? -1 : x > y ? 1 : 0);

function expected(sort: 'createdAt' | 'updatedAt' | 'lastName' | 'leadScore', order: 'asc' | 'desc'): string[] {
  const sign = order === 'asc' ? 1 : -1;
  const key = (s: Seed): (string | number)[] => {
    switch (sort) {
      case 'createdAt':
        return [s.created_at];
      case 'updatedAt':
        return [s.updated_at];
      case 'leadScore':
        return [s.lead_score];
      case 'lastName':
        return [(s.last_name ?? '').toLowerCase(), (s.first_name ?? '').toLowerCase()];
    }
  };
  return [...seeds]
    .sort((p, q) => {
      // Contacts without a last name come last in both directions.
      if (sort === 'lastName' && (p.last_name === null) !== (q.last_name === null)) return p.last_name === null ? 1 : -1;
      const [kp, kq] = [key(p), key(q)];
      for (let i = 0; i < kp.length; i++) {
        const c = cmp(kp[i]!, kq[i]!);
        if (c) return sign * c;
      }
      return sign * cmp(p.id, q.id);
    })
    .map((s) => s.id);
}

describe('listing contacts', () => {
  it('pages 25 at a time by default, up to 100 on request, and refuses more with a clear 400', async () => {
    const first = await org.member.contacts.list.query({});
    expect(first.items).toHaveLength(25);
    expect(first.nextCursor).toEqual(expect.any(String));
    const all = await org.member.contacts.list.query({ limit: 100 });
    expect(all.items).toHaveLength(TOTAL);
    expect(all.nextCursor).toBeNull();
    const r = await refusal(org.member.contacts.list.query({ limit: 101 }));
    expect(r).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(r.error).toContain('at most 100');
    const viaRest = await rest(t, 'GET', '/contacts?limit=101', org.ownerKey);
    expect(viaRest).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
  });

  for (const sort of ['createdAt', 'updatedAt', 'lastName', 'leadScore'] as const) {
    for (const order of ['asc', 'desc'] as const) {
      it(`walks every contact exactly once in ${sort} ${order} order, ties broken by id`, async () => {
        const ids: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await org.session.contacts.list.query({ sort, order, limit: 7, ...(cursor ? { cursor } : {}) });
          expect(page.items.length).toBeLessThanOrEqual(7);
          ids.push(...page.items.map((c) => c.id));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        expect(ids).toEqual(expected(sort, order));
      });
    }
  }

  it('serves the same pages over REST', async () => {
    const r = await rest(t, 'GET', '/contacts?sort=lastName&order=asc&limit=5', org.ownerKey);
    expect(r.status).toBe(200);
    expect(r.body.items.map((c: { id: string }) => c.id)).toEqual(expected('lastName', 'asc').slice(0, 5));
    const next = await rest(t, 'GET', `/contacts?sort=lastName&order=asc&limit=5&cursor=${r.body.nextCursor}`, org.ownerKey);
    expect(next.body.items.map((c: { id: string }) => c.id)).toEqual(expected('lastName', 'asc').slice(5, 10));
  });

  it('refuses a cursor it did not make, or one made for another sort', async () => {
    const page = await org.session.contacts.list.query({ sort: 'createdAt', limit: 2 });
    expect(await refusal(org.session.contacts.list.query({ sort: 'leadScore', cursor: page.nextCursor! }))).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
    });
    expect(await refusal(org.session.contacts.list.query({ cursor: 'garbage' }))).toMatchObject({ status: 400, code: 'invalid_cursor' });
    const forged = Buffer.from(JSON.stringify([1, 'createdAt', 'desc', ['2026-13-45T00:00:00.000000Z', randomUUID()]])).toString(
      'base64url',
    );
    expect(await refusal(org.session.contacts.list.query({ cursor: forged }))).toMatchObject({ status: 400, code: 'invalid_cursor' });
  });
});

describe('filtering contacts', () => {
  const ids = async (input: Parameters<TestOrg['session']['contacts']['list']['query']>[0]) => {
    const page = await org.session.contacts.list.query({ limit: 100, ...input });
    return page.items.map((c) => c.id).sort();
  };
  const where = (f: (s: Seed) => boolean) =>
    seeds
      .filter(f)
      .map((s) => s.id)
      .sort();

  it('filters by stage, tag (case-insensitive) and source, alone and together', async () => {
    expect(await ids({ stage: 'customer' })).toEqual(where((s) => s.stage === 'customer'));
    expect(await ids({ tag: 'vip' })).toEqual(where((s) => s.tags.includes('VIP')));
    expect(await ids({ source: 'webinar' })).toEqual(where((s) => s.source === 'webinar'));
    expect(await ids({ stage: 'customer', source: 'webinar', tag: 'VIP' })).toEqual(
      where((s) => s.stage === 'customer' && s.source === 'webinar' && s.tags.includes('VIP')),
    );
    expect(await ids({ stage: 'customer' })).not.toHaveLength(0);
  });

  it('searches first and last name, the full name, the email, and the company name and domain', async () => {
    expect(await ids({ q: 'BAKER' })).toEqual(where((s) => s.last_name === 'Baker'));
    expect(await ids({ q: 'amy ada' })).toEqual(where((s) => s.first_name === 'Amy' && s.last_name?.toLowerCase() === 'adams'));
    expect(await ids({ q: 'person17@' })).toEqual(where((s) => s.email.startsWith('person17@')));
    const [company] = await t.sql<{ id: string }>(
      `insert into companies (organization_id, domain, name) values (?, 'analytical.example', 'Engines Ltd') returning id`,
      [org.orgId],
    );
    const linked = await org.session.contacts.create.mutate({ firstName: 'Charles', companyId: company!.id });
    expect(linked.company).toEqual({ id: company!.id, name: 'Engines Ltd', domain: 'analytical.example' });
    expect(await ids({ q: 'engines' })).toEqual([linked.id]);
    expect(await ids({ q: 'analytical.ex' })).toEqual([linked.id]);
    // % and _ are literal characters, not wildcards.
    expect(await ids({ q: '%' })).toEqual([]);
    await org.session.contacts.delete.mutate({ id: linked.id });
  });

  it('pages through a filtered list', async () => {
    const wanted = where((s) => s.stage === 'lead');
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await org.session.contacts.list.query({ stage: 'lead', limit: 10, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((c) => c.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen.sort()).toEqual(wanted);
  });
});
