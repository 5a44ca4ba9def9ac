import type { InternalRouter } from '@leadwire/core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

const rest = async (path: string, key?: string) => {
  const res = await fetch(`${t.origin}/api${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, body: await res.json(), headers: res.headers };
};
const client = (key: string) =>
  createTRPCClient<InternalRouter>({ links: [httpLink({ url: `${t.origin}/api/trpc`, headers: { authorization: `Bearer ${key}` } })] });

describe('the internal surface', () => {
  it('answers an Internal key over REST and typed tRPC', async () => {
    const { internalKey, userId, orgId } = await t.newOrg();
    const r = await rest('/me', internalKey);
    expect(r.status).toBe(200);
    // An Internal key acts as the user who created it: its email and name are the creator's.
    const [owner] = await t.sql<{ email: string }>('select email from users where id = ?', [userId]);
    const expected = { userId, orgId, email: owner!.email, name: null, role: 'owner', via: 'internal_key' };
    expect(r.body).toEqual(expected);
    expect(await client(internalKey).me.query()).toEqual(expected);
  });

  it('refuses a Public API key with 403 wrong_api_surface, anything else with 401', async () => {
    const { publicKey } = await t.newOrg();
    expect(await rest('/me', publicKey)).toMatchObject({ status: 403, body: { code: 'wrong_api_surface' } });
    expect(await rest('/me')).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await rest('/me', 'lws_nope')).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const err = await client(publicKey)
      .me.query()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    expect((err as TRPCClientError<InternalRouter>).data).toMatchObject({ httpStatus: 403, body: { code: 'wrong_api_surface' } });
  });

  it('counts Internal keys per minute by plan and sends the rate-limit headers', async () => {
    const { internalKey } = await t.newOrg();
    const r = await rest('/me', internalKey);
    expect(r.headers.get('x-ratelimit-limit')).toBe('60');
    expect(Number(r.headers.get('x-ratelimit-remaining'))).toBe(59);
  });

  it('keeps its own contract and unknown paths in the { error, code } shape', async () => {
    const doc = await rest('/docs/json');
    expect(doc.status).toBe(200);
    expect(doc.body.paths['/me']).toBeDefined();
    const validation = await new Validator().validate(structuredClone(doc.body));
    expect(validation.errors ?? []).toEqual([]);
    expect(validation.valid).toBe(true);
    // Our error model, not the generator's, and each operation's own success status.
    const create = doc.body.paths['/contacts'].post.responses;
    expect(Object.keys(create)).toContain('201');
    expect(Object.keys(create)).not.toContain('200');
    // The 400 is validation_failed with its `issues` or a plain { error, code } (issue 17: no bare Error).
    expect(create['400'].content['application/json'].schema).toEqual({
      oneOf: [{ $ref: '#/components/schemas/ValidationError' }, { $ref: '#/components/schemas/ErrorBody' }],
    });
    expect(doc.body.components.schemas.ErrorBody.required).toEqual(expect.arrayContaining(['error', 'code']));
    expect(doc.body.components.schemas.ValidationError.required).toEqual(expect.arrayContaining(['error', 'code', 'issues']));
    expect(JSON.stringify(doc.body)).not.toContain('error.BAD_REQUEST');
    expect(await rest('/nope')).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });
});
