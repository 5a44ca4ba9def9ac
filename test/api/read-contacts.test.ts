import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

/** GET /v1/contacts and GET /v1/contacts/{id}: the contact read side a partner syncs and reconciles from. */

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

/** Every item id of a walk with `k` from `query`, page by page, and the pages' sizes; `onPage` runs after each page. */
async function walk(k: string, query: Record<string, string>, onPage?: (n: number) => Promise<void>) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
    const r = await call(t, 'GET', `/contacts?${q}`, { key: k });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(...r.body.items.map((c: { id: string }) => c.id));
    sizes.push(r.body.items.length);
    cursor = r.body.nextCursor;
    await onPage?.(sizes.length);
  } while (cursor);
  return { ids, sizes };
}

describe('GET /v1/contacts/{id}', () => {
  it('answers the very object contact events carry as data.contact, plus its consent', async () => {
    const up = await call(t, 'POST', '/contacts/upsert', {
      key,
      body: { email: 'Read.Me@Example.com', firstName: 'Read', lastName: 'Me', tags: ['vip'], title: 'CTO' },
    });
    expect(up.status).toBe(200);
    const r = await call(t, 'GET', `/contacts/${up.body.id}`, { key });
    expect(r.status).toBe(200);
    const [event] = await t.sql<{ payload: { data: { contact: unknown } } }>(
      `select payload from outbox_events where organization_id = ? and payload->>'event' = 'contact.created' and payload->'data'->'contact'->>'id' = ?`,
      [orgId, up.body.id],
    );
    // Consent by purpose rides on the read only (test/forms/consent-on-contact.test.ts); none asked here.
    expect(r.body).toEqual({ ...(event!.payload.data.contact as object), consent: {} });
    expect(r.body).toMatchObject({ email: 'read.me@example.com', jobTitle: 'CTO', source: 'api', companyId: null, tags: ['vip'] });
  });

  it('is 404 for an unknown id, another organization’s contact and a trashed contact; 400 for a malformed id', async () => {
    const mine = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'trashed-get@example.com' } });
    await t.sql('update contacts set deleted_at = now() where id = ?', [mine.body.id]);
    const theirs = await call(t, 'POST', '/contacts/upsert', { key: otherKey, body: { email: 'theirs-get@example.com' } });
    for (const id of [randomUUID(), theirs.body.id, mine.body.id]) {
      const r = await call(t, 'GET', `/contacts/${id}`, { key });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: `No contact with id ${id}`, code: 'not_found' });
    }
    for (const bad of ['not-a-uuid', `${randomUUID()}x`, "1'%20or%20'1'='1"]) {
      const r = await call(t, 'GET', `/contacts/${bad}`, { key });
      expect(r.status, bad).toBe(400);
      expect(r.body).toMatchObject({ code: 'validation_failed', issues: [{ path: 'id' }] });
    }
  });

  it('leaves /contacts/search to the email search, which still ignores unknown parameters (the versioning rules)', async () => {
    await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'searched@example.com' } });
    const r = await call(t, 'GET', '/contacts/search?email=searched@example.com', { key });
    expect(r.status).toBe(200);
    expect(r.body.email).toBe('searched@example.com');
    expect(Object.keys(r.body)).not.toContain('createdAt');
    expect((await call(t, 'GET', '/contacts/search?email=searched@example.com&extra=1', { key })).status).toBe(200);
  });
});

describe('GET /v1/contacts', () => {
  let paging: { key: string; orgId: string };
  /** The seeded live contacts in the order the list must give them. */
  let expected: string[];
  beforeAll(async () => {
    const o = await t.newOrg();
    paging = { key: o.publicKey, orgId: o.orgId };
    // 58 contacts over four instants a microsecond apart: ties only the id breaks, instants a JS Date cannot tell apart.
    await t.sql(
      `insert into contacts (organization_id, email, tags, source, lead_score, created_at, updated_at)
       select ?, 'p' || g || '@paging.example', '{}', 'api', 0, '2026-01-01Z',
              '2026-03-01T00:00:00.000001Z'::timestamptz + (g % 4) * interval '1 microsecond'
       from generate_series(1, 58) g`,
      [o.orgId],
    );
    await t.sql(`update contacts set deleted_at = now() where organization_id = ? and email = 'p58@paging.example'`, [o.orgId]);
    const rows = await t.sql<{ id: string }>(
      'select id from contacts where organization_id = ? and deleted_at is null order by updated_at, id',
      [o.orgId],
    );
    expected = rows.map((r) => r.id);
    expect(expected).toHaveLength(57);
  });

  it('pages in (updatedAt, id) order without repeats or gaps; trashed contacts and other organizations left out', async () => {
    const { ids, sizes } = await walk(paging.key, { limit: '10' });
    expect(ids).toEqual(expected);
    expect(sizes).toEqual([10, 10, 10, 10, 10, 7]);
    const first = await call(t, 'GET', '/contacts', { key: paging.key });
    expect(first.body.items).toHaveLength(25);
    expect(first.body.items[0]).toMatchObject({ id: expected[0], updatedAt: '2026-03-01T00:00:00.000Z', source: 'api' });
  });

  it('lists a contact changed while paging again later: a walk to the end never misses a change', async () => {
    const moved = expected[5]!;
    const [{ email } = { email: '' }] = await t.sql<{ email: string }>('select email from contacts where id = ?', [moved]);
    const { ids } = await walk(paging.key, { limit: '20' }, async (page) => {
      if (page !== 1) return;
      t.clock.set(new Date('2026-06-01T00:00:00Z'));
      const r = await call(t, 'POST', '/contacts/upsert', { key: paging.key, body: { email, firstName: 'Moved' } });
      expect(r.body).toMatchObject({ id: moved, created: false });
    });
    expect(ids).toHaveLength(expected.length + 1);
    expect(ids.filter((id) => id === moved)).toHaveLength(2);
    expect(ids.at(-1)).toBe(moved);
    expect(new Set(ids)).toEqual(new Set(expected));
  });

  it('starts at updatedSince, inclusive, with a cursor kept after it', async () => {
    const o = await t.newOrg();
    const at = (iso: string, email: string) =>
      t.sql(
        `insert into contacts (organization_id, email, tags, source, lead_score, created_at, updated_at) values (?, ?, '{}', 'api', 0, ?, ?)`,
        [o.orgId, email, iso, iso],
      );
    await at('2026-05-01T09:59:59.999999Z', 'before@since.example');
    await at('2026-05-01T10:00:00.000000Z', 'exactly@since.example');
    await at('2026-05-01T10:00:00.000001Z', 'after@since.example');
    await at('2026-05-02T00:00:00.000000Z', 'later@since.example');
    const emails = async (q: string) => {
      const r = await call(t, 'GET', `/contacts?${q}`, { key: o.publicKey });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { emails: r.body.items.map((c: { email: string }) => c.email), next: r.body.nextCursor };
    };
    expect((await emails('updatedSince=2026-05-01T10:00:00Z')).emails).toEqual([
      'exactly@since.example',
      'after@since.example',
      'later@since.example',
    ]);
    // An offset is the same instant.
    expect((await emails('updatedSince=2026-05-01T12:00:00%2B02:00')).emails).toHaveLength(3);
    expect((await emails('updatedSince=2026-05-03T00:00:00Z')).emails).toEqual([]);
    // A cursor from a walk without the filter, then a later updatedSince: the later bound wins.
    const page1 = await emails('limit=1');
    expect(page1.emails).toEqual(['before@since.example']);
    expect((await emails(`limit=10&cursor=${page1.next}&updatedSince=2026-05-01T10:00:00.000001Z`)).emails).toEqual([
      'after@since.example',
      'later@since.example',
    ]);
    expect((await emails(`limit=10&cursor=${page1.next}&updatedSince=2026-01-01T00:00:00Z`)).emails).toHaveLength(3);
  });

  it('takes a limit of 1 to 100', async () => {
    expect((await call(t, 'GET', '/contacts?limit=100', { key: paging.key })).body.items).toHaveLength(57);
    expect((await call(t, 'GET', '/contacts?limit=1', { key: paging.key })).body.items).toHaveLength(1);
    for (const limit of ['0', '101', '-1', '2.5', 'abc', '1e3']) {
      const r = await call(t, 'GET', `/contacts?limit=${limit}`, { key: paging.key });
      expect(r.status, limit).toBe(400);
      expect(r.body, limit).toMatchObject({ code: 'validation_failed', issues: [{ path: 'limit' }] });
    }
  });

  it('refuses a cursor it did not make with 400 invalid_cursor', async () => {
    const forged = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const cursor of [
      'garbage',
      randomUUID(),
      forged(['s1', '2026-02-30T00:00:00.000000Z', randomUUID()]),
      forged(['s1', '2026-02-01T00:00:00.000000Z', "x' or 1=1 --"]),
      forged(['s1', '2026-02-01 00:00:00', randomUUID()]),
      forged(['s2', '2026-02-01T00:00:00.000000Z', randomUUID()]),
      forged([1, 'updatedAt', 'asc', ['2026-02-01T00:00:00.000000Z', randomUUID()]]),
    ]) {
      const r = await call(t, 'GET', `/contacts?cursor=${encodeURIComponent(cursor)}`, { key: paging.key });
      expect(r.status, cursor).toBe(400);
      expect(r.body.code, cursor).toBe('invalid_cursor');
    }
    const long = await call(t, 'GET', `/contacts?cursor=${'a'.repeat(5000)}`, { key: paging.key });
    expect(long.status).toBe(400);
  });

  it('answers hostile updatedSince values with 400, never a 500', async () => {
    for (const since of [
      '99999-01-01T00:00:00Z',
      '+275760-09-13T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '0000-01-01T00:00:00Z',
      '2026-01-01',
      '2026-01-01T00:00:00',
      'yesterday',
      '1e309',
      "2026-01-01T00:00:00Z' or '1'='1",
      "'; drop table contacts; --",
      'x'.repeat(10_000),
    ]) {
      const r = await call(t, 'GET', `/contacts?updatedSince=${encodeURIComponent(since)}`, { key: paging.key });
      expect(r.status, since.slice(0, 40)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
  });

  it('refuses unknown query parameters, naming them (a misspelt filter would list everything), once the key is known', async () => {
    const r = await call(t, 'GET', '/contacts?updated_since=2026-01-01T00:00:00Z&limit=5', { key: paging.key });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: 'Validation failed: updated_since: unknown field or parameter "updated_since"',
      code: 'validation_failed',
      issues: [{ path: 'updated_since', message: 'unknown field or parameter "updated_since"' }],
    });
    // Judged after authentication, as every /v1 input: counted, with the rate-limit headers; no key is still 401.
    expect(r.headers.get('x-ratelimit-limit')).toBe('600');
    expect((await call(t, 'GET', '/contacts?updated_since=x')).status).toBe(401);
    const get = await call(t, 'GET', `/contacts/${expected[0]}?fields=email`, { key: paging.key });
    expect(get).toMatchObject({ status: 400, body: { issues: [{ path: 'fields' }] } });
  });
});

describe('who may read contacts', () => {
  it('needs contacts:read: 403 insufficient_scope naming it', async () => {
    const { userId } = (await t.sql<{ userId: string }>('select id as "userId" from users where organization_id = ? limit 1', [orgId]))[0]!;
    const writer = await t.newKey({ orgId, userId, name: 'writer', type: 'public', permissions: ['contacts:write', 'companies:read'] });
    const one = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'scope@example.com' } });
    for (const path of ['/contacts', `/contacts/${one.body.id}`]) {
      const r = await call(t, 'GET', path, { key: writer });
      expect(r.status, path).toBe(403);
      expect(r.body).toMatchObject({ code: 'insufficient_scope', required: 'contacts:read' });
    }
  });

  it('refuses an Internal key (403 wrong_api_surface) and no key (401)', async () => {
    for (const path of ['/contacts', `/contacts/${randomUUID()}`]) {
      expect((await call(t, 'GET', path, { key: internalKey })).body.code).toBe('wrong_api_surface');
      expect((await call(t, 'GET', path)).status).toBe(401);
    }
  });
});
