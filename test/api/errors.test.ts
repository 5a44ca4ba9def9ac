/**
 * Spec "Errors": every error under /api/v1, framework errors included, is a JSON object `{ error, code }` (plus
 * `issues` for validation, `required` for scope), never HTML, never a stack trace or tRPC internals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let key: string;
let orgId: string;
let contactId: string;
beforeAll(async () => {
  t = await initTestApp();
  const org = await t.newOrg();
  key = org.publicKey;
  orgId = org.orgId;
  const r = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'existing@example.com' } });
  contactId = r.body.id;
});
afterAll(async () => t?.close());

type Res = Awaited<ReturnType<typeof call>>;

/** What a framework or tRPC leak would look like in an error body. */
const INTERNALS = /TRPC|httpStatus|node_modules|\bat \S+ \(|\.ts:\d+|BAD_REQUEST|PARSE_ERROR|NOT_FOUND|INTERNAL_SERVER_ERROR|FST_/;

function expectPublicError(r: Res, status: number, code: string, extraKeys: string[] = []) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(typeof r.body, 'body must be a JSON object').toBe('object');
  expect(Object.keys(r.body).sort()).toEqual(['code', 'error', ...extraKeys].sort());
  expect(r.body.code).toBe(code);
  expect(typeof r.body.error).toBe('string');
  expect(r.body.error.length).toBeGreaterThan(0);
  expect(JSON.stringify(r.body)).not.toMatch(INTERNALS);
}

function expectValidation(r: Res, paths: string[]) {
  expectPublicError(r, 400, 'validation_failed', ['issues']);
  expect(Array.isArray(r.body.issues)).toBe(true);
  for (const issue of r.body.issues) {
    expect(Object.keys(issue).sort()).toEqual(['message', 'path']);
    expect(typeof issue.path).toBe('string');
    expect(typeof issue.message).toBe('string');
    expect(issue.message.length).toBeGreaterThan(0);
  }
  expect(r.body.issues.map((i: { path: string }) => i.path).sort()).toEqual([...paths].sort());
}

/** fetch with a body sent exactly as given (no content-type added unless in headers). */
async function raw(
  method: string,
  path: string,
  init: { body?: BodyInit; headers?: Record<string, string>; auth?: boolean } = {},
): Promise<Res> {
  const headers = { ...(init.auth === false ? {} : { authorization: `Bearer ${key}` }), ...init.headers };
  const res = await fetch(`${t.v1}${path}`, { method, headers, ...(init.body !== undefined ? { body: init.body } : {}) });
  return answerOf(res);
}

const contactsWithEmail = async (email: string) => t.sql('select 1 from contacts where organization_id = ? and email = ?', [orgId, email]);

describe('unknown paths and wrong methods', () => {
  it('answers an unknown path with 404 not_found, with or without a key', async () => {
    const paths = [
      '/nope',
      '',
      '/',
      '/people',
      '/contacts/upsert/extra',
      `/contacts/${contactId}/notes/x`,
      '/v2/contacts/upsert',
      '/docs/nope',
    ];
    for (const path of paths) {
      for (const k of [key, undefined]) {
        expectPublicError(await call(t, 'GET', path, { key: k }), 404, 'not_found');
        expectPublicError(await call(t, 'POST', path, { key: k, body: { email: 'x@example.com' } }), 404, 'not_found');
      }
    }
    expect(await contactsWithEmail('x@example.com')).toHaveLength(0);
  });

  it('answers a known path with the wrong method with 405 method_not_allowed and Allow', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/contacts/upsert', 'POST'],
      ['PUT', '/contacts/upsert', 'POST'],
      ['PATCH', '/contacts/upsert', 'POST'],
      ['DELETE', '/contacts/upsert', 'POST'],
      ['GET', '/contacts/batch-upsert', 'POST'],
      ['POST', '/contacts/search', 'GET'],
      ['DELETE', '/contacts/search', 'GET'],
      ['GET', `/contacts/${contactId}/notes`, 'POST'],
      ['GET', '/companies/upsert', 'POST'],
      ['GET', '/leads', 'POST'],
      // The read side (issue 18): GET only, and a concrete path is never read as an id.
      ['POST', '/contacts', 'GET'],
      ['POST', `/contacts/${contactId}`, 'GET'],
      ['POST', '/companies', 'GET'],
      ['POST', '/companies/search', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      for (const k of [key, undefined]) {
        const r = await call(t, method, path, { key: k });
        expectPublicError(r, 405, 'method_not_allowed');
        expect(r.headers.get('allow')).toBe(allow);
      }
    }
  });

  it('does not let HEAD through without a key', async () => {
    const res = await fetch(`${t.v1}/contacts/search?email=existing@example.com`, { method: 'HEAD' });
    expect([401, 405]).toContain(res.status);
  });
});

describe('request bodies', () => {
  it('answers malformed JSON with 400 malformed_json and writes nothing', async () => {
    for (const body of ['{"email":', '{"email":"mj@example.com",}', "{'email':'mj@example.com'}", '{"email":"mj@example.com"} x', 'NaN']) {
      expectPublicError(
        await raw('POST', '/contacts/upsert', { body, headers: { 'content-type': 'application/json' } }),
        400,
        'malformed_json',
      );
    }
    expect(await contactsWithEmail('mj@example.com')).toHaveLength(0);
  });

  it('answers an empty JSON body with 400 malformed_json', async () => {
    expectPublicError(
      await raw('POST', '/contacts/upsert', { body: '', headers: { 'content-type': 'application/json' } }),
      400,
      'malformed_json',
    );
    expectPublicError(await raw('POST', '/contacts/upsert', { headers: { 'content-type': 'application/json' } }), 400, 'malformed_json');
  });

  it('answers a body that is not JSON-typed with 415 unsupported_media_type and writes nothing', async () => {
    const json = JSON.stringify({ email: 'ct@example.com' });
    const form = new FormData();
    form.set('email', 'ct@example.com');
    const attempts: { body: BodyInit; headers?: Record<string, string> }[] = [
      { body: json, headers: { 'content-type': 'text/plain' } },
      { body: json, headers: { 'content-type': 'text/plain; charset=utf-8' } },
      { body: 'email=ct%40example.com', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { body: form },
      { body: json, headers: { 'content-type': 'application/xml' } },
    ];
    for (const a of attempts) expectPublicError(await raw('POST', '/contacts/upsert', a), 415, 'unsupported_media_type');
    expect(await contactsWithEmail('ct@example.com')).toHaveLength(0);
  });

  it('answers a body without Content-Type with 415', async () => {
    // A byte body makes fetch send no Content-Type at all.
    const body = new TextEncoder().encode(JSON.stringify({ email: 'noct@example.com' }));
    expectPublicError(await raw('POST', '/contacts/upsert', { body }), 415, 'unsupported_media_type');
    expect(await contactsWithEmail('noct@example.com')).toHaveLength(0);
  });

  it('accepts application/json with parameters and in any letter case (media types are case-insensitive)', async () => {
    const body = JSON.stringify({ email: 'charset@example.com' });
    const r = await raw('POST', '/contacts/upsert', { body, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const upper = await raw('POST', '/contacts/upsert', { body, headers: { 'content-type': 'Application/JSON' } });
    expect(upper.status, JSON.stringify(upper.body)).toBe(200);
  });

  it('answers a body over 1 MB with 413 payload_too_large, with or without a key', async () => {
    const body = JSON.stringify({ email: 'big@example.com', custom: { blob: 'a'.repeat(1_100_000) } });
    for (const auth of [true, false]) {
      expectPublicError(
        await raw('POST', '/contacts/upsert', { body, auth, headers: { 'content-type': 'application/json' } }),
        413,
        'payload_too_large',
      );
    }
    expect(await contactsWithEmail('big@example.com')).toHaveLength(0);
  });

  it('accepts a body just under 1 MB', async () => {
    // Spread over keys: one custom string value is limited to 10,000 characters.
    const custom = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`blob${i}`, 'a'.repeat(10_000)]));
    const body = JSON.stringify({ email: 'almost@example.com', custom });
    expect(body.length).toBeGreaterThan(1_000_000);
    const r = await raw('POST', '/contacts/upsert', { body, headers: { 'content-type': 'application/json' } });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
  });

  it('answers absurdly nested JSON with a 4xx, not a 500, even without a key', async () => {
    const nested = `{"email":"deep@example.com","custom":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
    for (const auth of [true, false]) {
      const r = await raw('POST', '/contacts/upsert', { body: nested, auth, headers: { 'content-type': 'application/json' } });
      expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(400);
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
    }
  });
});

describe('validation', () => {
  it('lists every problem of an upsert body as issues with dotted paths, writing nothing', async () => {
    const r = await call(t, 'POST', '/contacts/upsert', {
      key,
      body: { email: 'not-an-email', tags: ['ok', ''], custom: 'text', source: 'x'.repeat(41) },
    });
    expectValidation(r, ['email', 'tags.1', 'custom', 'source']);
    expect(r.body.error).toMatch(/email/);
    const wrongTypes = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'types@example.com', tags: 'vip', firstName: 42 } });
    expectValidation(wrongTypes, ['tags', 'firstName']);
    expect(await contactsWithEmail('types@example.com')).toHaveLength(0);
  });

  it('rejects a lead score outside 0-100 or not a whole number', async () => {
    for (const score of [101, -1, 1.5]) {
      expectValidation(await call(t, 'POST', '/leads', { key, body: { email: 'score@example.com', score } }), ['score']);
    }
    expect(await contactsWithEmail('score@example.com')).toHaveLength(0);
  });

  it('rejects a lead score that is not a number instead of coercing it (null must not pin the score to 0)', async () => {
    for (const score of [null, true, false, '', []]) {
      const r = await call(t, 'POST', '/leads', { key, body: { email: 'coerced@example.com', score } });
      expectValidation(r, ['score']);
    }
    expect(await contactsWithEmail('coerced@example.com')).toHaveLength(0);
  });

  it('rejects a search without a usable email', async () => {
    for (const query of ['', '?email=', '?email=not-an-email', '?email=a@example.com&email=b@example.com', '?mail=existing@example.com']) {
      expectValidation(await call(t, 'GET', `/contacts/search${query}`, { key }), ['email']);
    }
  });

  it('rejects a note on a malformed contact id or with an empty body', async () => {
    expectValidation(await call(t, 'POST', '/contacts/not-a-uuid/notes', { key, body: { body: 'x' } }), ['id']);
    expectValidation(await call(t, 'POST', `/contacts/${contactId}/notes`, { key, body: { body: '   ' } }), ['body']);
    expectValidation(await call(t, 'POST', `/contacts/${contactId}/notes`, { key, body: {} }), ['body']);
    expect(await t.sql('select 1 from notes where contact_id = ?', [contactId])).toHaveLength(0);
  });

  it('rejects a company without a usable domain', async () => {
    expectValidation(await call(t, 'POST', '/companies/upsert', { key, body: { name: 'No domain' } }), ['domain']);
    expectValidation(await call(t, 'POST', '/companies/upsert', { key, body: { domain: 'not a domain' } }), ['domain']);
    expect(await t.sql('select 1 from companies where organization_id = ?', [orgId])).toHaveLength(0);
  });

  it('rejects a bad X-Source header', async () => {
    const r = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'xs@example.com' }, headers: { 'x-source': 'has spaces!' } });
    expectValidation(r, ['X-Source']);
    expect(await contactsWithEmail('xs@example.com')).toHaveLength(0);
  });

  it('rejects a batch over 100 contacts or an empty one', async () => {
    const contacts = Array.from({ length: 101 }, (_, i) => ({ email: `b${i}@example.com` }));
    expectValidation(await call(t, 'POST', '/contacts/batch-upsert', { key, body: { contacts } }), ['contacts']);
    expectValidation(await call(t, 'POST', '/contacts/batch-upsert', { key, body: { contacts: [] } }), ['contacts']);
    expect(await contactsWithEmail('b0@example.com')).toHaveLength(0);
  });

  it('answers an upsert without identity with 400 missing_identity', async () => {
    for (const body of [
      { firstName: 'Ada' },
      { firstName: 'Ada', lastName: 'Lovelace' },
      { companyDomain: 'x.example', firstName: 'Ada' },
      {},
    ]) {
      expectPublicError(await call(t, 'POST', '/contacts/upsert', { key, body }), 400, 'missing_identity');
    }
  });

  it('answers errors raised by our own code in the same shape (404 not_found, 422 company_not_found)', async () => {
    expectPublicError(await call(t, 'GET', '/contacts/search?email=nobody@example.com', { key }), 404, 'not_found');
    expectPublicError(
      await call(t, 'POST', '/contacts/00000000-0000-4000-8000-000000000000/notes', { key, body: { body: 'x' } }),
      404,
      'not_found',
    );
    const r = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'co@example.com', companyDomain: 'unknown.example' } });
    expectPublicError(r, 422, 'company_not_found', ['domain']);
    expect(r.body.domain).toBe('unknown.example');
  });

  it('blames the server, not the client, when a stored row breaks the response contract', async () => {
    // A score outside 0-100 can only come from a fault on our side; the client's request was fine.
    const id = (await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'corrupt@example.com' } })).body.id;
    await t.sql('update contacts set lead_score = 150 where id = ?', [id]);
    const r = await call(t, 'GET', '/contacts/search?email=corrupt@example.com', { key });
    expectPublicError(r, 500, 'internal_error');
    expect(JSON.stringify(r.body)).not.toContain('leadScore');
  });
});
