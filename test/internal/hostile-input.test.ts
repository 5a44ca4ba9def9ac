/**
 * Hostile and unusual input on the application surface, over REST under /api and over typed tRPC at /api/trpc (the
 * same schemas and the same body parser): NUL, lone surrogates, `__proto__` keys, out-of-range numbers, non-UTF-8
 * bodies and compressed bodies are refused with a 4xx naming the problem; nothing answers 5xx.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { internalClient, trpcFailure } from '../support/internal.ts';
import { restRaw } from './contacts-support.ts';

let t: TestApp;
let key: string;
let contactId: string;
let pipelineId: string;
beforeAll(async () => {
  t = await initTestApp();
  const org = await t.newOrg({ plan: 'max' });
  key = org.internalKey;
  contactId = (await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'c@example.com', firstName: 'Ada' } })).body
    .id;
  pipelineId = (await internalClient(t, key).pipelines.list.query()).items[0]!.id;
});
afterAll(async () => t?.close());

const NUL = '\u0000';
const LONE = '\ud800';

const send = (method: string, path: string, body?: BodyInit, headers: Record<string, string> = {}) =>
  restRaw(t, method, path, key, body, headers);

function expectRefused(r: { status: number; body: any }, path: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.code).toBe('validation_failed');
  expect(r.body.issues.map((i: { path: string }) => i.path)).toContain(path);
}

describe('REST under /api', () => {
  const at = '2026-12-01T09:00:00Z';
  const until = '2026-12-01T10:00:00Z';
  const rows: [string, string, (bad: string) => unknown][] = [
    [
      '/accounts/sign-up',
      'organizationName',
      (bad) => ({ organizationName: `Acme${bad}`, email: `${randomUUID()}@example.com`, password: 'correct horse battery staple' }),
    ],
    [
      '/accounts/sign-up',
      'name',
      (bad) => ({ organizationName: 'Acme', email: `${randomUUID()}@example.com`, password: 'correct horse battery staple', name: bad }),
    ],
    ['/accounts/sign-in', 'email', (bad) => ({ email: `a${bad}@example.com`, password: 'correct horse battery staple' })],
    ['/accounts/sign-in', 'password', (bad) => ({ email: 'a@example.com', password: `pass${bad}word` })],
    ['/accounts/password-reset/request', 'email', (bad) => ({ email: `a${bad}@example.com` })],
    ['/contacts', 'firstName', (bad) => ({ firstName: `A${bad}` })],
    ['/contacts', 'custom.a', (bad) => ({ email: 'x@example.com', custom: { a: bad } })],
    ['/contacts/{id}/update', 'jobTitle', (bad) => ({ jobTitle: bad })],
    ['/contacts/{id}/tags/add', 'tags.0', (bad) => ({ tags: [bad] })],
    ['/pipelines', 'name', (bad) => ({ name: bad })],
    ['/pipelines/{pipeline}/stages', 'name', (bad) => ({ name: `S${bad}` })],
    ['/deals', 'title', (bad) => ({ contactId: '{id}', title: `Deal${bad}` })],
    ['/tasks', 'title', (bad) => ({ title: bad })],
    ['/bookings', 'title', (bad) => ({ contactId: '{id}', title: bad, startsAt: at, endsAt: until })],
    ['/ai-actions', 'summary', (bad) => ({ contactId: '{id}', kind: 'send_sms', summary: `s${bad}` })],
    ['/ai-actions', 'payload.body', (bad) => ({ contactId: '{id}', kind: 'send_sms', summary: 's', payload: { body: bad } })],
    ['/nonprofit/verifications', 'evidence.registry', (bad) => ({ status: 'verified', evidence: { registry: bad } })],
    ['/nonprofit/verifications', 'registrationNumber', (bad) => ({ status: 'verified', registrationNumber: bad })],
    ['/messages/send', 'body', (bad) => ({ contactId: '{id}', body: `Hi${bad}` })],
    ['/api-keys', 'name', (bad) => ({ name: bad, type: 'internal' })],
  ];
  const cases = rows.map(([path, field, body]) => [`POST ${path}`, path, body, field] as const);
  for (const [name, path, body, field] of cases) {
    for (const [label, bad] of [
      ['NUL', NUL],
      ['lone surrogate', LONE],
    ] as const) {
      it(`${name}: refuses a ${label} in ${field}`, async () => {
        const json = JSON.stringify(body(bad)).replaceAll('{id}', contactId);
        const r = await send('POST', path.replace('{id}', contactId).replace('{pipeline}', pipelineId), json);
        expectRefused(r, field);
      });
    }
  }

  for (const param of ['q', 'tag', 'source', 'stage', 'cursor']) {
    // A lone surrogate cannot arrive in a query string: percent-decoding turns its bytes into U+FFFD.
    it(`GET /contacts refuses a NUL in ${param}`, async () => {
      expectRefused(await send('GET', `/contacts?${param}=a%00b`), param);
    });
  }

  it('refuses a stage position beyond a PostgreSQL int', async () => {
    expectRefused(await send('POST', `/pipelines/${pipelineId}/stages`, JSON.stringify({ name: 'Far', position: 2 ** 31 })), 'position');
  });

  it('refuses a __proto__ key in an AI action payload and in nonprofit evidence, naming it', async () => {
    const payload = `{"contactId":"${contactId}","kind":"send_sms","summary":"s","payload":{"__proto__":{"x":1}}}`;
    expectRefused(await send('POST', '/ai-actions', payload), 'payload.__proto__');
    expectRefused(
      await send('POST', '/nonprofit/verifications', '{"status":"verified","evidence":{"a":{"__proto__":[]}}}'),
      'evidence.a.__proto__',
    );
  });

  it('refuses invalid UTF-8 and compressed bodies', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"P'), Buffer.from([0xff]), Buffer.from('X"}')]);
    expect((await send('POST', '/pipelines', bytes)).body.code).toBe('malformed_json');
    const gz = await send('POST', '/pipelines', '{"name":"Gz"}', { 'content-encoding': 'gzip' });
    expect([gz.status, gz.body.code]).toEqual([415, 'unsupported_content_encoding']);
    expect((await internalClient(t, key).pipelines.list.query()).items.map((p) => p.name)).not.toContain('Gz');
  });
});

describe('typed tRPC at /api/trpc', () => {
  const api = () => internalClient(t, key);

  it('refuses NUL and lone surrogates in bodies and queries with validation_failed', async () => {
    expect(await trpcFailure(api().contacts.create.mutate({ firstName: `A${NUL}` }))).toEqual({ status: 400, code: 'validation_failed' });
    expect(await trpcFailure(api().contacts.create.mutate({ email: 'y@example.com', custom: { k: LONE } }))).toEqual({
      status: 400,
      code: 'validation_failed',
    });
    expect(await trpcFailure(api().pipelines.create.mutate({ name: LONE }))).toEqual({ status: 400, code: 'validation_failed' });
    expect(await trpcFailure(api().contacts.list.query({ q: `a${NUL}` }))).toEqual({ status: 400, code: 'validation_failed' });
    expect(await trpcFailure(api().contacts.list.query({ tag: `a${LONE}` }))).toEqual({ status: 400, code: 'validation_failed' });
    expect(await trpcFailure(api().apiKeys.create.mutate({ name: NUL, type: 'internal' }))).toEqual({
      status: 400,
      code: 'validation_failed',
    });
  });

  it('refuses a __proto__ key as validation_failed, not malformed', async () => {
    const payload = JSON.parse('{"__proto__":{"x":1}}') as Record<string, unknown>;
    expect(await trpcFailure(api().aiActions.create.mutate({ contactId, kind: 'send_sms', summary: 's', payload }))).toEqual({
      status: 400,
      code: 'validation_failed',
    });
  });

  async function trpcRaw(path: string, body: BodyInit, headers: Record<string, string> = {}) {
    const res = await fetch(`${t.origin}/api/trpc/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, body: await res.json() };
  }

  it('shares the body parser: invalid UTF-8 is 400 malformed_json and Content-Encoding 415', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"P'), Buffer.from([0xff]), Buffer.from('X"}')]);
    expect(await trpcRaw('pipelines.create', bytes)).toMatchObject({
      status: 400,
      body: { code: 'malformed_json', error: expect.stringMatching(/UTF-8/) },
    });
    expect(await trpcRaw('pipelines.create', '{"name":"Gz"}', { 'content-encoding': 'gzip' })).toMatchObject({
      status: 415,
      body: { code: 'unsupported_content_encoding' },
    });
    expect((await api().pipelines.list.query()).items.map((p) => p.name)).not.toContain('Gz');
  });

  it('still serves mutations without input and batched calls', async () => {
    const session = await send(
      'POST',
      '/accounts/sign-up',
      JSON.stringify({ organizationName: 'Void', email: `${randomUUID()}@example.com`, password: 'correct horse battery staple' }),
    );
    expect(session.body.token, JSON.stringify(session.body)).toMatch(/^lws_/);
    await expect(internalClient(t, session.body.token).accounts.signOut.mutate()).resolves.toEqual({ ok: true });
    const batch = await trpcRaw(
      'pipelines.create,pipelines.create?batch=1',
      JSON.stringify({ 0: { name: 'B1' }, 1: { name: `B2${NUL}` } }),
    );
    expect(batch.body[0].result.data.name).toBe('B1');
    expect(batch.body[1].error.data.body.code).toBe('validation_failed');
  });
});
