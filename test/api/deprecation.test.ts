/**
 * Deprecation (docs/versioning.md): no /v1 operation is deprecated yet, so a fixture router declares one deprecated
 * operation and one with a deprecated field, served by the real REST surface on the test app's own database and keys,
 * and documented by the real /v1 document builder.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicApiProcedure } from '#core/auth/procedures.ts';
import { AUTH_ERRORS } from '#core/errors/surfaces.ts';
import { checkDeprecation, DEPRECATION_MIN_DAYS, deprecationHeaders } from '#core/http/deprecation.ts';
import { buildV1OpenApiDocument } from '#core/openapi/documents.ts';
import { router } from '#core/trpc.ts';
import { restSurface } from '../../apps/server/src/http/rest-surface.ts';
import { initTestApp, type TestApp } from '../support/app.ts';

const NOTICE = 'https://leadwire.example/changelog#deprecated-get-widgets';
const deprecated = { since: '2026-12-01', sunset: '2027-06-01', notice: NOTICE };

const fixture = router({
  widgets: publicApiProcedure('contacts:read')
    .meta({
      openapi: { method: 'GET', path: '/widgets', summary: 'List widgets (deprecated)' },
      errorCodes: [...AUTH_ERRORS, 'validation_failed'],
      deprecated,
    })
    .input(z.strictObject({}))
    .output(z.object({ widgets: z.array(z.string()) }))
    .query(() => ({ widgets: ['a'] })),
  gadgets: publicApiProcedure('contacts:read')
    .meta({
      openapi: { method: 'GET', path: '/gadgets', summary: 'List gadgets' },
      errorCodes: [...AUTH_ERRORS, 'validation_failed'],
      deprecated: { ...deprecated, fields: ['colour'] },
    })
    .input(z.strictObject({}))
    .output(z.object({ gadgets: z.array(z.object({ id: z.string(), colour: z.string() })) }))
    .query(() => ({ gadgets: [{ id: 'g1', colour: 'red' }] })),
  current: publicApiProcedure('contacts:read')
    .meta({ openapi: { method: 'GET', path: '/current', summary: 'Not deprecated' }, errorCodes: [...AUTH_ERRORS, 'validation_failed'] })
    .input(z.strictObject({}))
    .output(z.object({ ok: z.boolean() }))
    .query(() => ({ ok: true })),
});

let t: TestApp;
let app: FastifyInstance;
let key: string;
beforeAll(async () => {
  t = await initTestApp();
  key = (await t.newOrg()).publicKey;
  app = Fastify();
  await app.register(async (scope) => restSurface(scope, { deps: t.runtime.deps, router: fixture }), { prefix: '/fx' });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

const get = (url: string, auth = `Bearer ${key}`) => app.inject({ method: 'GET', url, headers: { authorization: auth } });

describe('a deprecated operation', () => {
  it('says so on every answer: Deprecation (RFC 9745), Sunset (RFC 8594) and a Link to the notice', async () => {
    const ok = await get('/fx/widgets');
    expect(ok.statusCode).toBe(200);
    expect(ok.headers.deprecation).toBe(`@${Date.UTC(2026, 11, 1) / 1000}`);
    expect(ok.headers.sunset).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
    expect(ok.headers.link).toBe(`<${NOTICE}>; rel="deprecation"`);
    // Refusals too: a client that never gets a success still learns of it.
    for (const refused of [await get('/fx/widgets', 'Bearer ck_live_nope'), await get('/fx/widgets?x=1')]) {
      expect(refused.statusCode).toBeGreaterThanOrEqual(400);
      expect(refused.headers.deprecation).toBe(ok.headers.deprecation);
      expect(refused.headers.sunset).toBe(ok.headers.sunset);
      expect(refused.headers.link).toBe(ok.headers.link);
    }
  });

  it('an operation with a deprecated field says so too; one without says nothing', async () => {
    expect((await get('/fx/gadgets')).headers).toMatchObject(deprecationHeaders(deprecated));
    const current = await get('/fx/current');
    expect(current.statusCode).toBe(200);
    expect(current.headers.deprecation).toBeUndefined();
    expect(current.headers.sunset).toBeUndefined();
    expect(current.headers.link).toBeUndefined();
  });

  it('is `deprecated: true` in the document, with the dates, the notice and the three headers', () => {
    const doc = buildV1OpenApiDocument('http://localhost:3000/api', fixture) as any;
    const widgets = doc.paths['/widgets'].get;
    expect(widgets.deprecated).toBe(true);
    expect(widgets.description).toContain('deprecated since 2026-12-01 and may stop working after 2027-06-01');
    expect(widgets.description).toContain(NOTICE);
    expect(Object.keys(widgets.responses['200'].headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
    const gadgets = doc.paths['/gadgets'].get;
    expect(gadgets.deprecated).toBeUndefined();
    const item = gadgets.responses['200'].content['application/json'].schema.properties.gadgets.items;
    expect(item.properties.colour.deprecated).toBe(true);
    expect(item.properties.id.deprecated).toBeUndefined();
    expect(doc.paths['/current'].get.deprecated).toBeUndefined();
  });

  it(`is refused at start unless announced at least ${DEPRECATION_MIN_DAYS} days before its sunset`, () => {
    expect(() => checkDeprecation('widgets.list', { ...deprecated, sunset: '2027-03-01' })).toThrow(/90 days before its sunset/);
    expect(() => checkDeprecation('widgets.list', { ...deprecated, since: '2026-02-30' })).toThrow(/YYYY-MM-DD/);
    expect(() => checkDeprecation('widgets.list', { ...deprecated, notice: 'see changelog' })).toThrow(/absolute URL/);
    expect(checkDeprecation('widgets.list', deprecated)).toEqual(deprecated);
  });
});
