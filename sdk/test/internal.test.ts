import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { createInternalClient, type InternalClient, type InternalRouter, TRPCClientError } from '../src/internal.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let baseUrl: string;

beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg();
  baseUrl = `${t.origin}/api`;
});
afterAll(async () => {
  await t?.close();
});

/** A new account through the application's REST sign-up: its session token, as a frontend holds it after signing up. */
async function sessionToken(): Promise<{ token: string; orgId: string }> {
  const res = await fetch(`${baseUrl}/accounts/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      organizationName: 'Session Org',
      email: `s-${crypto.randomUUID()}@example.com`,
      password: 'correct horse battery staple',
    }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { token: string; user: { orgId: string } };
  return { token: body.token, orgId: body.user.orgId };
}

/** The error a call was refused with: it must be a TRPCClientError carrying the server's status and body. */
async function refused(call: Promise<unknown>) {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCClientError);
  // Typed by the router's error shape: what an application reads without casting.
  const e = err as TRPCClientError<InternalRouter>;
  return { code: e.data?.code, status: e.data?.httpStatus, body: e.data?.body, shapeCode: e.shape?.code, message: e.message };
}

describe('createInternalClient', () => {
  it('calls the application surface with an Internal key: typed queries and mutations', async () => {
    const lw = createInternalClient({ baseUrl, apiKey: org.internalKey });
    const me = await lw.me.query();
    expectTypeOf(me.via).toEqualTypeOf<'session' | 'internal_key'>();
    expect(me).toMatchObject({ orgId: org.orgId, userId: org.userId, via: 'internal_key' });
    const created = await lw.contacts.create.mutate({ email: 'grace@example.com', firstName: 'Grace' });
    expectTypeOf(created.id).toEqualTypeOf<string>();
    const got = await lw.contacts.get.query({ id: created.id });
    expect(got.contact).toMatchObject({ id: created.id, email: 'grace@example.com', firstName: 'Grace' });
  });

  it('calls it with a session token', async () => {
    const session = await sessionToken();
    const lw = createInternalClient({ baseUrl: `${baseUrl}/`, sessionToken: session.token });
    expect(await lw.me.query()).toMatchObject({ orgId: session.orgId, via: 'session' });
  });

  it('sends the calls of one tick in one HTTP request, through the fetch it is given', async () => {
    const requests: string[] = [];
    const counting: typeof fetch = (input, init) => {
      requests.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    const lw: InternalClient = createInternalClient({ baseUrl, apiKey: org.internalKey, fetch: counting });
    const [me, page] = await Promise.all([lw.me.query(), lw.contacts.list.query({ limit: 5 })]);
    expect(me.orgId).toBe(org.orgId);
    expect(page.items.map((c) => c.email)).toContain('grace@example.com');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toContain('/api/trpc/me,contacts.list?batch=1');
  });

  it('refuses with TRPCClientError carrying tRPC code, HTTP status and the { error, code } body', async () => {
    const unknownKey = await refused(createInternalClient({ baseUrl, apiKey: 'ck_live_not_a_real_key_at_all_000000' }).me.query());
    expect(unknownKey).toMatchObject({ code: 'UNAUTHORIZED', status: 401, shapeCode: -32001 });
    expect(unknownKey.body?.code).toEqual(expect.any(String));

    const publicKey = await refused(createInternalClient({ baseUrl, apiKey: org.publicKey }).me.query());
    expect(publicKey).toMatchObject({ code: 'FORBIDDEN', status: 403, shapeCode: -32003, body: { code: 'wrong_api_surface' } });

    const lw = createInternalClient({ baseUrl, apiKey: org.internalKey });
    const missing = await refused(lw.contacts.get.query({ id: '00000000-0000-4000-8000-000000000000' }));
    expect(missing).toMatchObject({ code: 'NOT_FOUND', status: 404, shapeCode: -32004 });
    // Hostile input: the wrong type where the router wants an email gets a 400, and nothing is created.
    const before = await lw.contacts.list.query({ limit: 100 });
    const invalid = await refused(lw.contacts.create.mutate({ email: 42 as unknown as string }));
    expect(invalid).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect((await lw.contacts.list.query({ limit: 100 })).items).toHaveLength(before.items.length);
  });

  it('answers an unreachable server with TRPCClientError too (no status)', async () => {
    const lw = createInternalClient({ baseUrl: 'http://127.0.0.1:9/api', apiKey: org.internalKey });
    const err = await lw.me.query().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TRPCClientError);
  });

  it('needs a credential and a base URL, and says so', () => {
    expect(() => createInternalClient({ baseUrl, apiKey: '' })).toThrow(/apiKey .* or a sessionToken/);
    expect(() => createInternalClient({ baseUrl } as never)).toThrow(TypeError);
    expect(() => createInternalClient({ baseUrl: undefined as never, apiKey: org.internalKey })).toThrow(/needs baseUrl/);
  });
});
