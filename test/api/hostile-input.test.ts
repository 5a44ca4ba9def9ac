/**
 * Hostile and unusual input on /api/v1: every string PostgreSQL would refuse (NUL, lone UTF-16 surrogates, keys like
 * `__proto__` in stored JSON), bodies that are not UTF-8 or are compressed, are refused with a clear 4xx before any
 * write, naming the field. Nothing is saved and nothing answers 5xx.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let key: string;
let orgId: string;
let contactId: string;
beforeAll(async () => {
  t = await initTestApp();
  const org = await t.newOrg({ plan: 'max' });
  key = org.publicKey;
  orgId = org.orgId;
  contactId = (await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'existing@example.com', firstName: 'Ada' } })).body.id;
});
afterAll(async () => t?.close());

type Res = Awaited<ReturnType<typeof call>>;
const NUL = '\u0000';
const LONE = '\ud800';

function expectRefused(r: Res, path: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.code).toBe('validation_failed');
  expect(r.body.issues.map((i: { path: string }) => i.path)).toContain(path);
}

/** A body sent byte for byte, with the key. */
async function send(path: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Res> {
  const res = await fetch(`${t.v1}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  });
  return answerOf(res);
}

const contactCount = async (email: string) =>
  (await t.sql('select 1 from contacts where organization_id = ? and email = ?', [orgId, email])).length;

describe('NUL and lone surrogates', () => {
  const cases: [string, string, (bad: string) => unknown, string][] = [
    ['upsert firstName', '/contacts/upsert', (bad) => ({ email: 'nul1@example.com', firstName: `A${bad}` }), 'firstName'],
    ['upsert title', '/contacts/upsert', (bad) => ({ email: 'nul1@example.com', title: bad }), 'title'],
    ['upsert tag', '/contacts/upsert', (bad) => ({ email: 'nul1@example.com', tags: ['ok', `t${bad}`] }), 'tags.1'],
    ['upsert custom value', '/contacts/upsert', (bad) => ({ email: 'nul1@example.com', custom: { plan: `p${bad}` } }), 'custom.plan'],
    ['upsert custom key', '/contacts/upsert', (bad) => ({ email: 'nul1@example.com', custom: { [`k${bad}`]: 1 } }), `custom.k${'\u0000'}`],
    [
      'upsert nested custom',
      '/contacts/upsert',
      (bad) => ({ email: 'nul1@example.com', custom: { a: { b: [1, `x${bad}`] } } }),
      'custom.a.b.1',
    ],
    ['lead pipeline', '/leads', (bad) => ({ email: 'nul1@example.com', pipeline: `Sales${bad}` }), 'pipeline'],
    ['lead lastName', '/leads', (bad) => ({ email: 'nul1@example.com', lastName: bad }), 'lastName'],
    ['company name', '/companies/upsert', (bad) => ({ domain: 'nul.example.com', name: `N${bad}` }), 'name'],
    ['company custom', '/companies/upsert', (bad) => ({ domain: 'nul.example.com', custom: { x: bad } }), 'custom.x'],
    ['note body', `/contacts/{id}/notes`, (bad) => ({ body: `hello ${bad}` }), 'body'],
  ];
  for (const [name, path, body, field] of cases) {
    for (const [label, bad] of [
      ['NUL', NUL],
      ['lone surrogate', LONE],
    ] as const) {
      it(`refuses a ${label} in the ${name} with 400 naming ${field}`, async () => {
        const r = await call(t, 'POST', path.replace('{id}', contactId), { key, body: body(bad) });
        // The custom-key case names the key as sent; a lone surrogate key is named as sent too.
        expectRefused(r, field.replace(NUL, bad));
      });
    }
  }

  it('saves nothing from a refused row', async () => {
    await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'nul-none@example.com', firstName: NUL } });
    expect(await contactCount('nul-none@example.com')).toBe(0);
  });

  it('fails only the offending row of a batch and saves the others', async () => {
    const contacts: unknown[] = Array.from({ length: 100 }, (_, i) => ({
      email: `batch-${i}-${randomUUID()}@example.com`,
      firstName: 'Good',
    }));
    contacts[42] = { email: 'batch-bad@example.com', custom: { note: `x${NUL}` } };
    contacts[77] = { email: 'batch-bad2@example.com', lastName: `y${LONE}` };
    const r = await call(t, 'POST', '/contacts/batch-upsert', { key, body: { contacts } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ created: 98, updated: 0, failed: 2 });
    expect(r.body.results[42]).toMatchObject({ ok: false, error: { code: 'validation_failed', issues: [{ path: 'custom.note' }] } });
    expect(r.body.results[77]).toMatchObject({ ok: false, error: { code: 'validation_failed', issues: [{ path: 'lastName' }] } });
    expect(await contactCount('batch-bad@example.com')).toBe(0);
  });

  it('refuses a NUL in the search email', async () => {
    expect((await call(t, 'GET', `/contacts/search?email=${encodeURIComponent(`a${NUL}@example.com`)}`, { key })).status).toBe(400);
  });
});

describe('bytes that are not UTF-8', () => {
  it('refuses invalid UTF-8 instead of storing U+FFFD', async () => {
    const body = Buffer.concat([Buffer.from('{"email":"utf8@example.com","firstName":"P'), Buffer.from([0xff]), Buffer.from('X"}')]);
    const r = await send('/contacts/upsert', body);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe('malformed_json');
    expect(r.body.error).toMatch(/UTF-8/);
    expect(await contactCount('utf8@example.com')).toBe(0);
  });

  it('refuses an overlong encoding and a truncated sequence too', async () => {
    for (const bytes of [
      [0xc0, 0xaf],
      [0xe2, 0x82],
    ]) {
      const body = Buffer.concat([Buffer.from('{"email":"utf8b@example.com","firstName":"'), Buffer.from(bytes), Buffer.from('"}')]);
      expect((await send('/contacts/upsert', body)).body.code).toBe('malformed_json');
    }
  });

  it('takes valid multi-byte UTF-8 as it is', async () => {
    const r = await send('/contacts/upsert', Buffer.from('{"email":"utf8ok@example.com","firstName":"Zoë 😀"}', 'utf8'));
    expect(r.status).toBe(200);
    expect(await t.sql('select first_name from contacts where id = ?', [r.body.id])).toEqual([{ first_name: 'Zoë 😀' }]);
  });
});

describe('charsets and query strings that are not UTF-8', () => {
  it('refuses a body declared in another charset with 415 and saves nothing', async () => {
    for (const charset of ['iso-8859-1', 'latin1', '"utf-16"', 'windows-1252']) {
      const r = await send('/contacts/upsert', '{"email":"charset@example.com","firstName":"Zo\u00eb"}', {
        'content-type': `application/json; charset=${charset}`,
      });
      expect(r.status, `${charset}: ${JSON.stringify(r.body)}`).toBe(415);
      expect(r.body).toEqual({ error: expect.stringMatching(/UTF-8/), code: 'unsupported_media_type' });
    }
    expect(await contactCount('charset@example.com')).toBe(0);
  });

  it('takes utf-8 in any spelling', async () => {
    for (const charset of ['utf-8', 'UTF-8', 'utf8', '"utf-8"']) {
      const r = await send('/contacts/upsert', '{"email":"charset-ok@example.com"}', {
        'content-type': `application/json; charset=${charset}`,
      });
      expect(r.status, charset).toBe(200);
    }
  });

  it('refuses a query string whose escapes are not UTF-8 with 400 malformed_url instead of searching for U+FFFD', async () => {
    for (const query of ['q=%FF', 'q=P%ffX', 'tag=%C0%AF', 'q=%E2%82', 'q=100%']) {
      const res = await fetch(`${t.v1}/contacts/search?${query}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status, query).toBe(400);
      expect(await res.json()).toEqual({
        error: expect.stringMatching(/query string/),
        code: 'malformed_url',
        requestId: res.headers.get('x-request-id'),
      });
    }
    const ok = await fetch(`${t.v1}/contacts/search?email=${encodeURIComponent('existing@example.com')}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(ok.status).toBe(200);
  });
});

describe('Content-Encoding', () => {
  for (const encoding of ['gzip', 'br', 'deflate', 'x-made-up']) {
    it(`refuses ${encoding} with 415 unsupported_content_encoding`, async () => {
      const r = await send('/contacts/upsert', '{"email":"enc@example.com"}', { 'content-encoding': encoding });
      expect(r.status, JSON.stringify(r.body)).toBe(415);
      expect(r.body).toEqual({ error: expect.stringMatching(/Content-Encoding/), code: 'unsupported_content_encoding' });
    });
  }

  it('accepts identity', async () => {
    const r = await send('/contacts/upsert', '{"email":"enc-identity@example.com"}', { 'content-encoding': 'identity' });
    expect(r.status).toBe(200);
    expect(await contactCount('enc@example.com')).toBe(0);
  });
});

describe('__proto__ and friends are data, never malformed', () => {
  it('refuses a __proto__ key in custom with validation_failed naming it', async () => {
    const r = await send('/contacts/upsert', '{"email":"proto@example.com","custom":{"__proto__":{"x":1}}}');
    expectRefused(r, 'custom.__proto__');
    expect(await contactCount('proto@example.com')).toBe(0);
  });

  it('names a nested __proto__ key by its path', async () => {
    const r = await send('/contacts/upsert', '{"email":"proto@example.com","custom":{"a":{"b":[{"__proto__":{"polluted":true}}]}}}');
    expectRefused(r, 'custom.a.b.0.__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses constructor.prototype the same way', async () => {
    const r = await send('/companies/upsert', '{"domain":"proto.example.com","custom":{"constructor":{"prototype":{"x":1}}}}');
    expectRefused(r, 'custom.constructor');
  });

  it('ignores a __proto__ key at the top of a body like any unknown field', async () => {
    const r = await send('/contacts/upsert', '{"email":"proto-top@example.com","__proto__":{"firstName":"Mallory"}}');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await t.sql('select first_name from contacts where id = ?', [r.body.id])).toEqual([{ first_name: null }]);
  });
});

describe('lengths and ranges', () => {
  it('refuses over-long strings naming the field', async () => {
    expectRefused(
      await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'long@example.com', custom: { k: 'x'.repeat(10_001) } } }),
      'custom.k',
    );
    expectRefused(
      await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'long@example.com', firstName: 'x'.repeat(201) } }),
      'firstName',
    );
  });

  it('refuses custom objects nested deeper than allowed', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 12; i++) deep = { d: deep };
    const r = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'deep@example.com', custom: { deep } } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });

  it('refuses a lead score out of range and huge numbers', async () => {
    for (const score of [101, -1, 2 ** 31, 1e308]) {
      expectRefused(await call(t, 'POST', '/leads', { key, body: { email: 'range@example.com', score } }), 'score');
    }
  });
});
