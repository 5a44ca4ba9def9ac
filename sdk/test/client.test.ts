/**
 * The /v1 client against a real server: every method, and every error answer mapped to a LeadwireError, none of the
 * 4xx retried.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { createClient, type LeadwireClient, LeadwireError } from '../src/index.ts';
import { recordingFetch } from './client-support.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let rec: ReturnType<typeof recordingFetch>;
let lw: LeadwireClient;
beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg();
  rec = recordingFetch();
  // A trailing slash on the base URL is forgiven.
  lw = createClient({ baseUrl: `${t.origin}/api/`, apiKey: org.publicKey, fetch: rec.fetch });
});
afterAll(async () => t?.close());

const email = () => `sdk-${randomUUID()}@example.com`;

/** The LeadwireError a call rejects with, after checking that it was sent exactly once (a 4xx is never retried). */
async function failure(call: () => Promise<unknown>): Promise<LeadwireError> {
  const before = rec.exchanges.length;
  const err = await call().then(
    () => expect.fail('the call succeeded'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LeadwireError);
  expect(rec.exchanges.length - before).toBe(1);
  const sent = rec.exchanges.at(-1)!;
  const e = err as LeadwireError;
  expect(e.name).toBe('LeadwireError');
  expect(e.status).toBe(sent.status);
  expect(e.requestId).toBeTruthy();
  expect(e.requestId).toBe(sent.requestId);
  return e;
}

describe('methods', () => {
  it('contacts.upsert creates then updates; contacts.search finds the contact; every write carries a fresh Idempotency-Key', async () => {
    const e = email();
    const created = await lw.contacts.upsert({ email: e, firstName: 'Ada', title: 'CTO', tags: ['vip'] });
    expect(created).toEqual({ id: expect.any(String), created: true, matchedBy: null });
    const updated = await lw.contacts.upsert({ email: e.toUpperCase(), lastName: 'Lovelace' });
    expect(updated).toEqual({ id: created.id, created: false, matchedBy: 'email' });
    const [a, b] = rec.exchanges.slice(-2);
    expect(a!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(b!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(a!.idempotencyKey).not.toBe(b!.idempotencyKey);

    const found = await lw.contacts.search({ email: e });
    expect(found).toEqual({
      id: created.id,
      email: e,
      firstName: 'Ada',
      lastName: 'Lovelace',
      phone: null,
      jobTitle: 'CTO',
      tags: ['vip'],
      leadScore: expect.any(Number),
      stage: expect.any(String),
    });
    expect(rec.exchanges.at(-1)!.idempotencyKey).toBeNull();
  });

  it('contacts.search encodes the query: an address with + reaches the server intact (not as a space)', async () => {
    const e = `a+b-${randomUUID()}@example.com`;
    const { id } = await lw.contacts.upsert({ email: e });
    expect((await lw.contacts.search({ email: e })).id).toBe(id);
  });

  it('sends the caller’s Idempotency-Key, and the server replays the first answer to it', async () => {
    const key = `sdk-${randomUUID()}`;
    const body = { email: email() };
    const first = await lw.contacts.upsert(body, { idempotencyKey: key });
    const again = await lw.contacts.upsert(body, { idempotencyKey: key });
    expect(again).toEqual(first);
    expect(first.created).toBe(true);
    expect(rec.exchanges.slice(-2).map((x) => [x.idempotencyKey, x.replayed])).toEqual([
      [key, null],
      [key, 'true'],
    ]);
  });

  it('contacts.addNote answers the created note', async () => {
    const { id } = await lw.contacts.upsert({ email: email() });
    const note = await lw.contacts.addNote(id, { body: 'Called back' });
    expect(note).toEqual({ id: expect.any(String), contactId: id, body: 'Called back', createdAt: expect.any(String) });
    expect(await t.sql('select body from notes where contact_id = ?', [id])).toEqual([{ body: 'Called back' }]);
  });

  it('companies.upsert normalises the domain; leads.create places the contact on the default pipeline', async () => {
    const domain = `sdk-${randomUUID().slice(0, 8)}.com`;
    const company = await lw.companies.upsert({ domain: `https://www.${domain}/about`, name: 'Example' });
    expect(company).toEqual({ id: expect.any(String), created: true, domain });
    expect(await lw.companies.upsert({ domain })).toEqual({ ...company, created: false });

    const lead = await lw.leads.create({ email: email(), companyDomain: domain, score: 70 });
    expect(lead).toEqual({ id: expect.any(String), created: true, pipelineItemId: expect.any(String), warning: null });
    const [row] = await t.sql<{ company_id: string }>('select company_id from contacts where id = ?', [lead.id]);
    expect(row!.company_id).toBe(company.id);
  });

  it('types every body and answer from the generated contract', () => {
    // Never run: typecheck (npm run typecheck covers sdk/) refuses these calls, so a wrong type cannot slip in.
    const typeOnly = (c: LeadwireClient) => {
      // @ts-expect-error email is a string
      void c.contacts.upsert({ email: 1 });
      // @ts-expect-error a company needs its domain
      void c.companies.upsert({ name: 'x' });
      // @ts-expect-error a note needs a body
      void c.contacts.addNote('id', {});
      // @ts-expect-error search takes an email
      void c.contacts.search({ phone: '1' });
    };
    expect(typeof typeOnly).toBe('function');
  });
});

describe('errors', () => {
  it('400 validation_failed carries every issue', async () => {
    const e = await failure(() => lw.contacts.upsert({ email: 'not-an-email', tags: ['ok', ''] }));
    expect(e).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(e.message).toEqual(expect.any(String));
    expect(e.issues!.map((i) => i.path).sort()).toEqual(['email', 'tags.1']);
    expect(e.required).toBeUndefined();
    expect(e.retryAfter).toBeUndefined();
  });

  it('400 missing_identity and 400 validation_failed on a contact id that is not one (the id cannot escape its path segment)', async () => {
    expect(await failure(() => lw.contacts.upsert({ firstName: 'No', lastName: 'Identity' }))).toMatchObject({
      status: 400,
      code: 'missing_identity',
    });
    const e = await failure(() => lw.contacts.addNote('../search?email=x', { body: 'x' }));
    expect(e).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(rec.exchanges.at(-1)!.url).toContain('/v1/contacts/..%2Fsearch%3Femail%3Dx/notes');
  });

  it('401 unauthorized for an unknown key', async () => {
    const bad = createClient({ baseUrl: `${t.origin}/api`, apiKey: 'ck_live_not-a-real-key', fetch: rec.fetch });
    expect(await failure(() => bad.contacts.search({ email: email() }))).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('403 insufficient_scope names the permission in required; 403 wrong_api_surface for an Internal key', async () => {
    const readOnly = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'read', type: 'public', permissions: ['contacts:read'] });
    const c = createClient({ baseUrl: `${t.origin}/api`, apiKey: readOnly, fetch: rec.fetch });
    expect(await failure(() => c.contacts.upsert({ email: email() }))).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      required: 'contacts:write',
    });
    expect(await failure(() => c.leads.create({ email: email() }))).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      required: 'leads:write',
    });
    const internal = createClient({ baseUrl: `${t.origin}/api`, apiKey: org.internalKey, fetch: rec.fetch });
    expect(await failure(() => internal.contacts.search({ email: email() }))).toMatchObject({ status: 403, code: 'wrong_api_surface' });
  });

  it('404 not_found for a contact that does not exist', async () => {
    expect(await failure(() => lw.contacts.search({ email: email() }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(() => lw.contacts.addNote(randomUUID(), { body: 'x' }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('409 idempotency_key_reused for the caller’s key sent with another body', async () => {
    const key = `sdk-${randomUUID()}`;
    await lw.contacts.upsert({ email: email() }, { idempotencyKey: key });
    const e = await failure(() => lw.contacts.upsert({ email: email() }, { idempotencyKey: key }));
    expect(e).toMatchObject({ status: 409, code: 'idempotency_key_reused' });
  });

  it('422 company_not_found for a company domain that does not exist', async () => {
    const e = await failure(() => lw.contacts.upsert({ email: email(), companyDomain: `nowhere-${randomUUID()}.com` }));
    expect(e).toMatchObject({ status: 422, code: 'company_not_found' });
  });

  it('unexpected_response when the base URL is not the API root (a 2xx that is not JSON)', async () => {
    const wrong = createClient({ baseUrl: `${t.origin}/api/embed/tracking.js#`, apiKey: org.publicKey, maxRetries: 0 });
    const err = await wrong.contacts.search({ email: email() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeadwireError);
    expect(err).toMatchObject({ status: 200, code: 'unexpected_response' });
    expect((err as Error).message).toMatch(/baseUrl/);
  });

  it('says which option is missing when baseUrl or apiKey is unset (an environment variable that was not exported)', () => {
    expect(() => createClient({ baseUrl: undefined as never, apiKey: org.publicKey })).toThrow(/needs baseUrl/);
    expect(() => createClient({ baseUrl: `${t.origin}/api`, apiKey: '' })).toThrow(/needs apiKey/);
  });
});
