/**
 * `Idempotency-Key` on /v1 writes: the first response is replayed for 24 hours to a retry with the same key and the
 * same request, the same key with another request is a 409, failures are not stored, and keys are scoped per API key.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg();
});
afterAll(async () => t?.close());

type Res = Awaited<ReturnType<typeof call>>;

const post = (path: string, body: unknown, idem?: string, opts: { key?: string; headers?: Record<string, string> } = {}) =>
  call(t, 'POST', path, {
    key: opts.key ?? org.publicKey,
    body,
    headers: { ...(idem === undefined ? {} : { 'idempotency-key': idem }), ...opts.headers },
  });

const replayed = (r: Res) => r.headers.get('idempotent-replayed');
const ikey = () => `idem-${randomUUID()}`;
const HOUR = 3_600_000;

function expectError(r: Res, status: number, code: string, extraKeys: string[] = []) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(Object.keys(r.body).sort()).toEqual(['code', 'error', ...extraKeys].sort());
  expect(r.body.code).toBe(code);
  expect(typeof r.body.error).toBe('string');
}

const count = async (query: string, params: unknown[]) => (await t.sql(query, params)).length;
const contacts = (email: string) => count('select 1 from contacts where organization_id = ? and email = ?', [org.orgId, email]);
const notesOf = (contactId: string) => count('select 1 from notes where contact_id = ?', [contactId]);

async function newContact(email = `c-${randomUUID()}@example.com`): Promise<string> {
  const r = await post('/contacts/upsert', { email });
  expect(r.status).toBe(200);
  return r.body.id;
}

describe('replay', () => {
  it('replays the first upsert response to a retry: same id, created true both times, one contact', async () => {
    const key = ikey();
    const body = { email: 'replay@example.com', firstName: 'Ada', tags: ['a'] };
    const first = await post('/contacts/upsert', body, key);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ created: true, matchedBy: null });
    expect(replayed(first)).toBeNull();

    for (let i = 0; i < 2; i++) {
      const again = await post('/contacts/upsert', body, key);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(replayed(again)).toBe('true');
      expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    }
    expect(await contacts('replay@example.com')).toBe(1);

    // Control: without the header the same request runs again and reports an update.
    const plain = await post('/contacts/upsert', body);
    expect(plain.body).toMatchObject({ id: first.body.id, created: false, matchedBy: 'email' });
  });

  it('makes a note POST safe to retry: one note, the same 201 response', async () => {
    const contactId = await newContact();
    const key = ikey();
    const first = await post(`/contacts/${contactId}/notes`, { body: 'Called back' }, key);
    expect(first.status).toBe(201);
    const again = await post(`/contacts/${contactId}/notes`, { body: 'Called back' }, key);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(replayed(again)).toBe('true');
    expect(await notesOf(contactId)).toBe(1);

    // Control: without the header a retry is a second note.
    await post(`/contacts/${contactId}/notes`, { body: 'Called back' });
    expect(await notesOf(contactId)).toBe(2);
  });

  it('treats the same fields in another order as the same request', async () => {
    const key = ikey();
    const first = await post('/contacts/upsert', { email: 'order@example.com', firstName: 'A', lastName: 'B' }, key);
    const again = await post('/contacts/upsert', { lastName: 'B', firstName: 'A', email: 'order@example.com' }, key);
    expect(again.body).toEqual(first.body);
    expect(replayed(again)).toBe('true');
  });

  it('lets exactly one of many concurrent duplicates run', async () => {
    const contactId = await newContact();
    const key = ikey();
    const results = await Promise.all(Array.from({ length: 10 }, () => post(`/contacts/${contactId}/notes`, { body: 'Once' }, key)));
    expect(await notesOf(contactId)).toBe(1);
    const ok = results.filter((r) => r.status === 201);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'idempotency_in_progress');
  });
});

describe('conflicts', () => {
  it('answers the same key with a different body with 409 idempotency_key_reused, applying nothing', async () => {
    const key = ikey();
    const first = await post('/contacts/upsert', { email: 'conflict@example.com', firstName: 'First' }, key);
    expect(first.status).toBe(200);
    expectError(await post('/contacts/upsert', { email: 'conflict@example.com', firstName: 'Second' }, key), 409, 'idempotency_key_reused');
    expectError(await post('/contacts/upsert', { email: 'other-conflict@example.com' }, key), 409, 'idempotency_key_reused');
    const [row] = await t.sql<{ first_name: string }>('select first_name from contacts where id = ?', [first.body.id]);
    expect(row!.first_name).toBe('First');
    expect(await contacts('other-conflict@example.com')).toBe(0);
    // The stored response is still there for a true retry.
    const retry = await post('/contacts/upsert', { email: 'conflict@example.com', firstName: 'First' }, key);
    expect(replayed(retry)).toBe('true');
  });

  it('treats another endpoint, another contact in the path or another X-Source as another request', async () => {
    const key = ikey();
    const a = await newContact();
    const b = await newContact();
    expect((await post(`/contacts/${a}/notes`, { body: 'Same text' }, key)).status).toBe(201);
    expectError(await post(`/contacts/${b}/notes`, { body: 'Same text' }, key), 409, 'idempotency_key_reused');
    expect(await notesOf(b)).toBe(0);

    const key2 = ikey();
    expect((await post('/contacts/upsert', { email: 'endpoint@example.com' }, key2)).status).toBe(200);
    expectError(await post('/leads', { email: 'endpoint@example.com' }, key2), 409, 'idempotency_key_reused');
    expect(await count('select 1 from pipeline_items where organization_id = ?', [org.orgId])).toBe(0);

    const key3 = ikey();
    expect((await post('/contacts/upsert', { email: 'xsource@example.com' }, key3, { headers: { 'x-source': 'one' } })).status).toBe(200);
    expectError(
      await post('/contacts/upsert', { email: 'xsource@example.com' }, key3, { headers: { 'x-source': 'two' } }),
      409,
      'idempotency_key_reused',
    );
  });

  it('scopes keys to the API key: other keys, in the same org or another, use the same value independently', async () => {
    const shared = ikey();
    const sameOrgKey = await t.newKey({
      orgId: org.orgId,
      userId: org.userId,
      name: 'second',
      type: 'public',
      permissions: ['contacts:write'],
    });
    const other = await t.newOrg();

    const a = await post('/contacts/upsert', { email: 'scoped@example.com' }, shared);
    expect(a.body).toMatchObject({ created: true });
    // Same body, same Idempotency-Key, another API key: it runs (an update), it is not A's replay.
    const b = await post('/contacts/upsert', { email: 'scoped@example.com' }, shared, { key: sameOrgKey });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ id: a.body.id, created: false, matchedBy: 'email' });
    expect(replayed(b)).toBeNull();
    // A different body is not a conflict for another key either.
    const c = await post('/contacts/upsert', { email: 'someone-else@example.com' }, shared, { key: other.publicKey });
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ created: true });
    expect(replayed(c)).toBeNull();
    // Each key still replays its own response.
    expect((await post('/contacts/upsert', { email: 'scoped@example.com' }, shared, { key: sameOrgKey })).body).toEqual(b.body);
    expect((await post('/contacts/upsert', { email: 'someone-else@example.com' }, shared, { key: other.publicKey })).body).toEqual(c.body);
  });
});

describe('failures and expiry', () => {
  it('does not store a failed request: a corrected retry with the same key runs', async () => {
    const key = ikey();
    const bad = await post('/contacts/upsert', { email: 'not-an-email' }, key);
    expectError(bad, 400, 'validation_failed', ['issues']);
    const fixed = await post('/contacts/upsert', { email: 'fixed@example.com' }, key);
    expect(fixed.status).toBe(200);
    expect(fixed.body).toMatchObject({ created: true });
    expect(replayed(fixed)).toBeNull();
    expect(replayed(await post('/contacts/upsert', { email: 'fixed@example.com' }, key))).toBe('true');
  });

  it('does not store a refusal by the service: the identical request succeeds once the cause is fixed', async () => {
    const key = ikey();
    const body = { email: 'later@example.com', companyDomain: 'later.example' };
    expectError(await post('/contacts/upsert', body, key), 422, 'company_not_found', ['domain']);
    expect((await post('/companies/upsert', { domain: 'later.example' })).status).toBe(200);
    const ok = await post('/contacts/upsert', body, key);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ created: true });
    expect(replayed(ok)).toBeNull();

    const noteKey = ikey();
    const missing = randomUUID();
    expectError(await post(`/contacts/${missing}/notes`, { body: 'x' }, noteKey), 404, 'not_found');
    expect(await t.sql('select 1 from idempotency_records where key = ?', [noteKey])).toHaveLength(0);
  });

  it('refuses a malformed Idempotency-Key with 400 and writes nothing', async () => {
    for (const bad of ['', 'has space', 'x'.repeat(256), 'tab\there', 'clé']) {
      const r = await post('/contacts/upsert', { email: 'badkey@example.com' }, bad);
      expectError(r, 400, 'validation_failed', ['issues']);
      expect(r.body.issues).toEqual([{ path: 'Idempotency-Key', message: expect.any(String) }]);
    }
    expect(await contacts('badkey@example.com')).toBe(0);
    const longest = await post('/contacts/upsert', { email: 'badkey@example.com' }, `~${'k'.repeat(254)}`);
    expect(longest.status).toBe(200);
  });

  it('replays for 24 hours by the server clock, and no longer', async () => {
    const contactId = await newContact();
    const key = ikey();
    const first = await post(`/contacts/${contactId}/notes`, { body: 'Day one' }, key);
    expect(first.status).toBe(201);

    t.clock.advance(23 * HOUR);
    const within = await post(`/contacts/${contactId}/notes`, { body: 'Day one' }, key);
    expect(replayed(within)).toBe('true');
    expect(within.body.id).toBe(first.body.id);

    t.clock.advance(2 * HOUR);
    const after = await post(`/contacts/${contactId}/notes`, { body: 'Day one' }, key);
    expect(after.status).toBe(201);
    expect(replayed(after)).toBeNull();
    expect(after.body.id).not.toBe(first.body.id);
    expect(await notesOf(contactId)).toBe(2);
    // The new answer is the one replayed from now on.
    expect((await post(`/contacts/${contactId}/notes`, { body: 'Day one' }, key)).body.id).toBe(after.body.id);

    // An expired key may also be reused for a different request.
    t.clock.advance(25 * HOUR);
    const different = await post(`/contacts/${contactId}/notes`, { body: 'Day two' }, key);
    expect(different.status).toBe(201);
    expect(replayed(different)).toBeNull();
    expect(await notesOf(contactId)).toBe(3);
  });
});
