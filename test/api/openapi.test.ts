import { restRoutes, v1Router } from '@leadwire/core';
import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { EVENT_NAMES } from '#core/events/names.ts';
import { Validator } from '@seriousme/openapi-schema-validator';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { hasChromium, sharedChromium } from '../support/chromium.ts';
import type { Browser } from 'playwright-core';
import { buildInternalOpenApiDocument, buildV1OpenApiDocument } from '#core/openapi/documents.ts';

/** The code -> status table the contract promises (issue and spec "Errors"). */
const STATUS: Record<string, number> = {
  unauthorized: 401,
  wrong_api_surface: 403,
  insufficient_scope: 403,
  contact_limit_reached: 403,
  not_found: 404,
  validation_failed: 400,
  missing_identity: 400,
  malformed_json: 400,
  invalid_cursor: 400,
  company_not_found: 422,
  idempotency_key_reused: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unsupported_content_encoding: 415,
  rate_limited: 429,
  internal_error: 500,
  save_failed: 500,
  malformed_url: 400,
  bad_request: 400,
  too_many_connections: 429,
  request_timeout: 408,
  headers_too_large: 431,
  service_unavailable: 503,
};
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const SPEC_ENDPOINTS = [
  ['get', '/contacts/search'],
  ['post', '/contacts/upsert'],
  ['post', '/contacts/{id}/notes'],
  ['post', '/companies/upsert'],
  ['post', '/leads'],
] as const;

let t: TestApp;
let raw: any; // the document as served
let doc: any; // the same with every $ref resolved, by the independent validator
beforeAll(async () => {
  t = await initTestApp();
  raw = await (await fetch(`${t.v1}/docs/json`)).json();
  const validator = new Validator();
  const res = await validator.validate(structuredClone(raw));
  expect(res.errors ?? []).toEqual([]);
  doc = validator.resolveRefs();
});
afterAll(async () => t?.close());

const op = (method: string, path: string) => doc.paths[path]?.[method];
const schemaOf = (method: string, path: string, status: number | string) =>
  op(method, path).responses[String(status)]?.content['application/json'].schema;
const bodyOf = (method: string, path: string) => op(method, path).requestBody.content['application/json'].schema;
const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).map(([method, o]) => ({ path, method, o: o as any })),
  );

/** True when every branch of a raw (unresolved) schema is a shared error shape: a component with `error` and `code`. */
function reachesError(s: any): boolean {
  if (s.oneOf) return s.oneOf.every(reachesError);
  const shape = s.$ref?.startsWith('#/components/schemas/') ? raw.components.schemas[s.$ref.split('/').pop()] : undefined;
  return Boolean(shape?.required?.includes('error') && shape.required.includes('code') && shape.properties.code.enum);
}

/** A real answer of the server, checked against what the document says for its operation and status. */
function expectConforms(method: string, path: string, res: { status: number; body: any; headers: Headers }) {
  const documented = op(method, path).responses[String(res.status)];
  expect(documented, `${method} ${path} does not document status ${res.status}`).toBeDefined();
  // answerOf took an error body's requestId out after checking it is the x-request-id header: the body as sent has it.
  const body =
    res.status >= 400 && res.body && typeof res.body === 'object' ? { ...res.body, requestId: res.headers.get('x-request-id') } : res.body;
  const parsed = z.fromJSONSchema(documented.content['application/json'].schema).safeParse(body);
  expect(parsed.error?.issues ?? [], `${res.status} ${JSON.stringify(res.body)}`).toEqual([]);
  for (const [name, h] of Object.entries<any>(documented.headers ?? {})) {
    const value = res.headers.get(name);
    if (h.required) expect(value, `header ${name} on ${res.status}`).not.toBeNull();
    if (value !== null && h.schema.type === 'integer') expect(z.fromJSONSchema(h.schema).safeParse(Number(value)).success).toBe(true);
  }
}

describe('the document', () => {
  it('is OpenAPI 3.1 with the server BASE_URL/v1, and is built once', async () => {
    expect(raw.openapi).toMatch(/^3\.1\./);
    expect(raw.servers).toEqual([expect.objectContaining({ url: `${t.runtime.deps.config.BASE_URL}/v1` })]);
    expect(await (await fetch(`${t.v1}/docs/json`)).json()).toEqual(raw);
  });

  it('both served documents are the builds the snapshot check compares (test/contract), bar the base URL', async () => {
    const base = t.runtime.deps.config.BASE_URL;
    expect(raw).toEqual(JSON.parse(JSON.stringify(buildV1OpenApiDocument(base))));
    const internal = await (await fetch(`${t.origin}/api/docs/json`)).json();
    expect(internal).toEqual(JSON.parse(JSON.stringify(buildInternalOpenApiDocument(base))));
  });

  it('declares the bearer scheme and every operation requires it with its permission', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const { method, path, o } of operations()) {
      // One requirement per permission that lets the key in (OpenAPI ORs them): one, or for the feed two.
      expect(o.security.length, `${method} ${path}`).toBeGreaterThanOrEqual(1);
      for (const requirement of o.security) {
        expect(requirement, `${method} ${path}`).toEqual({ bearerAuth: [expect.stringMatching(/^[a-z]+:(read|write)$/)] });
      }
    }
    expect(op('get', '/events').security).toEqual([{ bearerAuth: ['events:read'] }, { bearerAuth: ['contacts:read'] }]);
    expect(op('get', '/events').description).toContain('Requires the `events:read` or `contacts:read` permission.');
  });

  it('has every endpoint of the spec with its method, and every route the server serves', () => {
    for (const [method, path] of SPEC_ENDPOINTS) expect(op(method, path), `${method} ${path}`).toBeDefined();
    for (const r of restRoutes(v1Router)) expect(op(r.method.toLowerCase(), r.path), r.procedure).toBeDefined();
  });

  it('documents every request field of the spec', () => {
    const fields = (m: string, p: string) => Object.keys(bodyOf(m, p).properties);
    expect(fields('post', '/contacts/upsert')).toEqual(
      expect.arrayContaining(['email', 'firstName', 'lastName', 'phone', 'title', 'companyDomain', 'tags', 'custom', 'source']),
    );
    expect(bodyOf('post', '/contacts/upsert').properties.tags).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(bodyOf('post', '/contacts/upsert').properties.custom).toMatchObject({ type: 'object' });
    expect(bodyOf('post', '/contacts/upsert').properties.source).toMatchObject({ type: 'string', pattern: '^[A-Za-z0-9._-]{1,40}$' });
    expect(fields('post', '/companies/upsert')).toEqual(expect.arrayContaining(['domain', 'name', 'industry', 'size', 'custom']));
    expect(fields('post', '/leads')).toEqual(expect.arrayContaining(['email', 'source', 'score', 'pipeline', 'custom']));
    expect(bodyOf('post', '/leads').properties.score.anyOf).toEqual([
      expect.objectContaining({ type: 'integer', minimum: 0, maximum: 100 }),
    ]);
    expect(bodyOf('post', '/contacts/{id}/notes')).toMatchObject({ properties: { body: { type: 'string' } }, required: ['body'] });
    expect(op('post', '/contacts/{id}/notes').parameters).toContainEqual(
      expect.objectContaining({ in: 'path', name: 'id', required: true }),
    );
    expect(op('get', '/contacts/search').parameters).toContainEqual(
      expect.objectContaining({ in: 'query', name: 'email', required: true }),
    );
    // The batch rows are the upsert body, not `unknown`.
    expect(raw.paths['/contacts/batch-upsert'].post.requestBody.content['application/json'].schema.properties.contacts.items).toEqual({
      $ref: '#/components/schemas/ContactUpsertInput',
    });
  });

  it('documents every response field of the spec', () => {
    const search = schemaOf('get', '/contacts/search', 200);
    const searchFields = ['id', 'email', 'firstName', 'lastName', 'phone', 'jobTitle', 'tags', 'leadScore', 'stage'];
    expect(search.required).toEqual(expect.arrayContaining(searchFields));
    expect(search.properties.leadScore).toMatchObject({ type: 'integer', minimum: 0, maximum: 100 });
    const upsert = schemaOf('post', '/contacts/upsert', 200);
    expect(upsert.required).toEqual(expect.arrayContaining(['id', 'created', 'matchedBy']));
    expect(upsert.properties.created.type).toBe('boolean');
    expect(JSON.stringify(upsert.properties.matchedBy)).toMatch(/"email".*"domain_name".*"null"/);
    const leads = schemaOf('post', '/leads', 200);
    expect(leads.required).toEqual(expect.arrayContaining(['id', 'created', 'pipelineItemId', 'warning']));
    expect(JSON.stringify(leads.properties.warning)).toMatch(/"no_pipeline_found".*"pipeline_has_no_stages"/);
  });

  it('answers a note with 201 and no 200', () => {
    expect(Object.keys(op('post', '/contacts/{id}/notes').responses)).toContain('201');
    expect(Object.keys(op('post', '/contacts/{id}/notes').responses)).not.toContain('200');
  });

  it('gives every error response a shared error shape, grouped by status, with an example per code', () => {
    expect(raw.components.schemas.ErrorBody.required).toEqual(expect.arrayContaining(['error', 'code']));
    // `Error` would shadow the built-in of the clients generated in TypeScript.
    expect(raw.components.schemas.Error).toBeUndefined();
    const meta = new Map(restRoutes(v1Router).map((r) => [`${r.method.toLowerCase()} ${r.path}`, r.errorCodes]));
    for (const { method, path, o } of operations()) {
      const documented = new Set<string>();
      for (const [status, r] of Object.entries<any>(o.responses)) {
        if (Number(status) < 400) continue;
        const where = `${method} ${path} ${status}`;
        const rawResponse = raw.paths[path][method].responses[status];
        const rawSchema = (rawResponse.$ref ? raw.components.responses[rawResponse.$ref.split('/').pop()] : rawResponse).content[
          'application/json'
        ].schema;
        expect(reachesError(rawSchema), where).toBe(true);
        const check = z.fromJSONSchema(r.content['application/json'].schema);
        for (const [code, ex] of Object.entries<any>(r.content['application/json'].examples)) {
          expect(STATUS[code], `${where} ${code}`).toBe(Number(status));
          expect(ex.value.code).toBe(code);
          expect(check.safeParse(ex.value).success, `${where} example ${code}`).toBe(true);
          documented.add(code);
        }
      }
      const expected = [...meta.get(`${method} ${path}`)!, 'unauthorized', 'wrong_api_surface', 'insufficient_scope', 'rate_limited'];
      expected.push(
        'validation_failed',
        'internal_error',
        ...(o.requestBody ? ['malformed_json', 'payload_too_large', 'unsupported_media_type'] : []),
      );
      expect([...documented].sort(), `${method} ${path}`).toEqual(expect.arrayContaining(expected));
    }
    // The variants carry their extra fields.
    expect(JSON.stringify(schemaOf('post', '/leads', 403))).toMatch(/"required":\["error","code","required","requestId"\]/);
    expect(JSON.stringify(schemaOf('post', '/leads', 400))).toMatch(/"required":\["path","message"\]/);
    // enum, never const: openapi-python-client drops a schema whose code is a const.
    expect(JSON.stringify(raw)).not.toMatch(/"const":"(validation_failed|insufficient_scope|company_not_found)"/);
  });

  it('puts the rate-limit headers on every response, retry-after on 429, and the request headers where they apply', () => {
    for (const { method, path, o } of operations()) {
      for (const [status, r] of Object.entries<any>(o.responses)) {
        for (const h of RATE_HEADERS) expect(r.headers[h]?.schema.type, `${method} ${path} ${status} ${h}`).toBe('integer');
        if (Number(status) < 300) for (const h of RATE_HEADERS) expect(r.headers[h].required).toBe(true);
      }
      // The per-address 429 (too_many_connections) is refused before any key is read: no rate-limit headers, no
      // retry-after, so the 429 documents both as sent only with rate_limited.
      expect(o.responses['429']['x-error-codes']).toEqual(['rate_limited', 'too_many_connections']);
      for (const h of RATE_HEADERS) expect(o.responses['429'].headers[h].required).toBe(false);
      expect(o.responses['429'].headers['retry-after']).toMatchObject({ required: false, schema: { type: 'integer' } });
      const headers = (o.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => p.name);
      expect(headers.includes('Idempotency-Key'), `${method} ${path}`).toBe(method === 'post');
      expect(headers.includes('X-Source'), `${method} ${path}`).toBe(
        ['/contacts/upsert', '/contacts/batch-upsert', '/leads'].includes(path),
      );
    }
  });

  it('explains auth, errors, rate limits, idempotency and upsert semantics', () => {
    const text: string = doc.info.description;
    for (const s of [
      'Bearer',
      '"error"',
      '"code"',
      '600',
      'x-ratelimit-reset',
      'seconds',
      'Idempotency-Key',
      '24 hours',
      '409',
      'null',
      'custom',
      'Tags are only added',
      'silent',
    ]) {
      expect(text).toContain(s);
    }
  });
});

describe('the webhooks', () => {
  const DELIVERY_HEADERS = [
    'X-Webhook-Signature',
    'X-Webhook-Event',
    'X-Webhook-Timestamp',
    'X-Webhook-Id',
    'User-Agent',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
  ];

  it('describe every event of the catalogue as a POST with its payload schema, an example it accepts, and the delivery headers', () => {
    expect(Object.keys(raw.webhooks).sort()).toEqual([...EVENT_NAMES].sort());
    for (const name of EVENT_NAMES) {
      const post = doc.webhooks[name].post;
      const media = post.requestBody.content['application/json'];
      const schema = z.fromJSONSchema(media.schema);
      expect(schema.safeParse(media.example).error?.issues ?? [], name).toEqual([]);
      expect(media.example).toEqual(EVENT_CATALOGUE[name].example);
      expect(post.summary).toContain(EVENT_CATALOGUE[name].label);
      // The contract is the spec's payload shape: a wrong name, a timestamp without milliseconds or a foreign source fail.
      expect(schema.safeParse({ ...media.example, event: 'nope' }).success, name).toBe(false);
      expect(schema.safeParse({ ...media.example, timestamp: '2026-11-22T14:03:07Z' }).success, name).toBe(false);
      expect(schema.safeParse({ ...media.example, source: name === 'ping' ? 'app' : 'elsewhere' }).success, name).toBe(false);
      expect(
        post.parameters
          .filter((p: any) => p.in === 'header' && p.required)
          .map((p: any) => p.name)
          .sort(),
      ).toEqual([...DELIVERY_HEADERS].sort());
      expect(Object.keys(post.responses).sort()).toEqual(['2XX', 'default']);
      expect(post.description).toMatch(/10 seconds[\s\S]*5 attempts/);
    }
    expect(
      doc.webhooks['contact.created'].post.requestBody.content['application/json'].schema.properties.data.properties.contact.required,
    ).toEqual(expect.arrayContaining(['id', 'firstName', 'email']));
  });

  it('explain signing and verification in the Webhooks tag', () => {
    const tag = raw.tags.find((t: any) => t.name === 'Webhooks');
    for (const s of ['X-Webhook-Signature', 'timingSafeEqual', 'createHmac', 'Standard Webhooks', '1,000', '30 days'])
      expect(tag.description).toContain(s);
    expect(doc.components.parameters.StandardWebhookSignature.description).toMatch(/24 hours/);
  });

  it('accept what the service really writes for a /v1 upsert', async () => {
    const { orgId, publicKey } = await t.newOrg();
    await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email: 'hook@example.com', firstName: 'Hook' } });
    await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email: 'hook@example.com', tags: ['new'] } });
    const rows = await t.sql<{ event: string; payload: unknown }>('select event, payload from outbox_events where organization_id = ?', [
      orgId,
    ]);
    expect(rows.map((r) => r.event).sort()).toEqual(['contact.created', 'contact.tag_added', 'contact.updated']);
    for (const r of rows) {
      const schema = z.fromJSONSchema(doc.webhooks[r.event].post.requestBody.content['application/json'].schema);
      expect(schema.safeParse(r.payload).error?.issues ?? [], r.event).toEqual([]);
    }
  });
});

describe('the interactive reference', () => {
  it('is HTML whose every asset is local and served', async () => {
    const page = await fetch(`${t.v1}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    for (const m of html.matchAll(/https?:\/\/[^\s"'<>)]+/g)) expect(new URL(m[0]).origin, m[0]).toBe(t.origin);
    // The bundle would otherwise load its fonts from fonts.scalar.com and report telemetry.
    expect(html).toMatch(/"withDefaultFonts": false/);
    expect(html).toMatch(/"telemetry": false/);
    const assets = [
      ...[...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/g)].map((m) => m[1]!),
      ...[...html.matchAll(/url\(\s*["']?([^"')]+)/g)].map((m) => m[1]!),
    ];
    expect(assets.length).toBeGreaterThan(0);
    for (const a of assets) {
      const url = new URL(a, page.url);
      expect(url.origin, a).toBe(t.origin);
      const res = await fetch(url);
      expect(res.status, a).toBe(200);
      if (a.endsWith('.js')) expect(await res.text()).toContain('createApiReference');
    }
    const spec = /"url": "([^"]+)"/.exec(html)?.[1];
    expect(await (await fetch(new URL(spec!, page.url))).json()).toEqual(raw);
  });

  it('is sent with security headers on both surfaces: a CSP that allows only itself, nosniff, no framing, no referrer', async () => {
    for (const url of [`${t.v1}/docs`, `${t.origin}/api/docs`]) {
      const page = await fetch(url);
      const html = await page.text();
      expect(page.status, url).toBe(200);
      const csp = Object.fromEntries(
        page.headers
          .get('content-security-policy')!
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .map(([name, ...values]) => [name, values]),
      );
      expect(csp['default-src']).toEqual(["'none'"]);
      expect(csp['frame-ancestors']).toEqual(["'none'"]);
      expect(csp['connect-src']).toEqual(["'self'"]);
      // 'self' plus exactly one hash per inline script, and never 'unsafe-inline' or 'unsafe-eval' for scripts.
      const inline = [...html.matchAll(/<script\b(?![^>]*\bsrc\s*=)[^>]*>/gi)].length;
      expect(inline).toBeGreaterThan(0);
      expect(csp['script-src']).toEqual([
        "'self'",
        ...Array.from({ length: inline }, () => expect.stringMatching(/^'sha256-[A-Za-z0-9+/]+=*'$/)),
      ]);
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      const bundle = await fetch(new URL('js/scalar.js', `${page.url.replace(/\/?$/, '/')}`));
      expect(bundle.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // The API's own answers are left as they were.
    expect((await fetch(`${t.v1}/docs/json`)).headers.get('content-security-policy')).toBeNull();
  });
});

describe.skipIf(!hasChromium)('the interactive reference in a browser with no Internet', () => {
  // The run's Chromium (test/support/chromium.ts); without it this check cannot run, the static one above still does.
  let browser: Browser;
  beforeAll(async () => {
    browser = await sharedChromium();
  });
  afterAll(() => browser?.close());

  // The reference renders a tag's operations when it is opened: the first tag on arrival, the webhooks from their link.
  const pages: [string, string[]][] = [
    ['docs', ['Find a contact by email', 'x-ratelimit-reset']],
    [
      'docs#tag/webhooks',
      ['Contact created (contact.created)', 'api-1/tag/webhooks/webhook/POST/contact.created.headers.X-Webhook-Signature'],
    ],
  ];
  // Done when the page shows what it must, not after a fixed budget of (virtual) time: the earlier --dump-dom check
  // ran 20 s of the page's virtual clock, every animation frame of it rendered, which on a busy machine took minutes.
  it.each(pages)(
    'renders %s under its Content-Security-Policy and loads nothing from another host',
    async (path, shown) => {
      const context = await browser.newContext();
      try {
        const requested: string[] = [];
        const refused: string[] = [];
        context.on('request', (r) => requested.push(r.url()));
        const page = await context.newPage();
        // The page's console carries a CSP refusal as "Refused to ... Content Security Policy". (Not the
        // securitypolicyviolation event: zod inside Scalar's bundle probes `Function('')` to choose its JIT, caught.)
        page.on('console', (m) => {
          if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
        });
        await page.goto(`${t.v1}/${path}`);
        // The serialized DOM, as --dump-dom gave it: some of the texts are ids and attributes, not visible text.
        await page.waitForFunction((texts) => texts.every((text) => document.documentElement.outerHTML.includes(text)), shown, {
          polling: 100,
          timeout: 60_000,
        });
        const dom = await page.content();
        for (const text of shown) expect(dom).toContain(text);
        expect(refused).toEqual([]);
        expect(requested).toContain(`${t.v1}/docs/json`);
        for (const url of requested) expect(new URL(url).origin, url).toBe(t.origin);
      } finally {
        await context.close();
      }
    },
    90_000,
  );
});

describe('real answers match the document', () => {
  it('for successes and errors of every kind', async () => {
    const { publicKey, internalKey } = await t.newOrg();
    const up = (body: unknown, headers: Record<string, string> = {}) =>
      call(t, 'POST', '/contacts/upsert', { key: publicKey, body, headers });
    expectConforms('post', '/contacts/upsert', await call(t, 'POST', '/contacts/upsert', { body: { email: 'a@example.com' } }));
    expectConforms('post', '/contacts/upsert', await call(t, 'POST', '/contacts/upsert', { key: internalKey, body: {} }));
    expectConforms('post', '/contacts/upsert', await up('{"email": '));
    expectConforms('post', '/contacts/upsert', await up('email=a', { 'content-type': 'text/plain' }));
    expectConforms('post', '/contacts/upsert', await up({ email: 'a@example.com', custom: { big: 'x'.repeat(1_100_000) } }));
    expectConforms('post', '/contacts/upsert', await up({ firstName: 'Ada' }));
    expectConforms('post', '/contacts/upsert', await up({ email: 'a@example.com', companyDomain: 'nowhere.example' }));

    const created = await up({ email: 'ada@example.com', tags: ['vip'] }, { 'idempotency-key': 'k-1' });
    expect(created.status).toBe(200);
    expectConforms('post', '/contacts/upsert', created);
    const replay = await up({ email: 'ada@example.com', tags: ['vip'] }, { 'idempotency-key': 'k-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expectConforms('post', '/contacts/upsert', replay);
    const reused = await up({ email: 'bob@example.com' }, { 'idempotency-key': 'k-1' });
    expect(reused.status).toBe(409);
    expectConforms('post', '/contacts/upsert', reused);

    const invalid = await call(t, 'POST', '/leads', { key: publicKey, body: { email: 'ada@example.com', score: 300 } });
    expect(invalid.body.code).toBe('validation_failed');
    expectConforms('post', '/leads', invalid);
    expectConforms('post', '/leads', await call(t, 'POST', '/leads', { key: publicKey, body: { email: 'lead@example.com', score: 80 } }));
    expectConforms(
      'post',
      '/companies/upsert',
      await call(t, 'POST', '/companies/upsert', { key: publicKey, body: { domain: 'acme.com' } }),
    );
    expectConforms('get', '/contacts/search', await call(t, 'GET', '/contacts/search?email=ADA@example.com', { key: publicKey }));
    expectConforms('get', '/contacts/search', await call(t, 'GET', '/contacts/search?email=nobody@example.com', { key: publicKey }));
    const note = await call(t, 'POST', `/contacts/${created.body.id}/notes`, { key: publicKey, body: { body: 'Called.' } });
    expect(note.status).toBe(201);
    expectConforms('post', '/contacts/{id}/notes', note);
    const batch = await call(t, 'POST', '/contacts/batch-upsert', {
      key: publicKey,
      body: { contacts: [{ email: 'c@example.com' }, { email: 'bad' }] },
    });
    expectConforms('post', '/contacts/batch-upsert', batch);
  });

  it('names in insufficient_scope the permission the document requires', async () => {
    const { orgId, userId } = await t.newOrg();
    const key = await t.newKey({ orgId, userId, type: 'public', name: 'no permissions', permissions: [] });
    for (const r of restRoutes(v1Router)) {
      const path = r.path.replace('{id}', '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10');
      const res = await call(t, r.method, path, { key, ...(r.method === 'POST' ? { body: {} } : {}) });
      expect(res.body, r.procedure).toMatchObject({ code: 'insufficient_scope' });
      expect([res.body.required]).toEqual(op(r.method.toLowerCase(), r.path).security[0].bearerAuth);
      expectConforms(r.method.toLowerCase(), r.path, res);
    }
  });
});
