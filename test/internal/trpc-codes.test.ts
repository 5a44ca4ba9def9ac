/**
 * Typed tRPC clients branch on the error's code: JSON-RPC `shape.code` and `data.code` follow the HTTP status of our
 * error (401, 403, 404, 429, ...), never -32603 INTERNAL_SERVER_ERROR for an error that is not ours.
 */
import { randomUUID } from 'node:crypto';
import type { InternalRouter } from '@leadwire/core';
import { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { internalClient } from '../support/internal.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg({ plan: 'starter' });
});
afterAll(async () => t?.close());

async function refusal(call: Promise<unknown>) {
  return refusalOf(
    await call.then(
      () => null,
      (e: unknown) => e,
    ),
  );
}

function refusalOf(err: unknown) {
  expect(err).toBeInstanceOf(TRPCClientError);
  const e = err as TRPCClientError<InternalRouter>;
  return {
    shapeCode: e.shape?.code,
    dataCode: e.data?.code,
    httpStatus: e.data?.httpStatus,
    code: (e.data as { body?: { code?: string } } | undefined)?.body?.code,
  };
}

describe('tRPC error codes', () => {
  it('401: UNAUTHORIZED, -32001', async () => {
    const r = await refusal(internalClient(t, 'ck_live_not_a_real_key_0000000000000000').me.query());
    expect(r).toEqual({ shapeCode: -32001, dataCode: 'UNAUTHORIZED', httpStatus: 401, code: 'unauthorized' });
  });

  it('403: FORBIDDEN, -32003', async () => {
    const r = await refusal(internalClient(t, org.publicKey).me.query());
    expect(r).toEqual({ shapeCode: -32003, dataCode: 'FORBIDDEN', httpStatus: 403, code: 'wrong_api_surface' });
  });

  it('404: NOT_FOUND, -32004', async () => {
    const r = await refusal(internalClient(t, org.internalKey).contacts.get.query({ id: randomUUID() }));
    expect(r).toEqual({ shapeCode: -32004, dataCode: 'NOT_FOUND', httpStatus: 404, code: 'not_found' });
  });

  it('400: BAD_REQUEST, -32600', async () => {
    const r = await refusal(internalClient(t, org.internalKey).contacts.get.query({ id: 'not-a-uuid' }));
    expect(r).toEqual({ shapeCode: -32600, dataCode: 'BAD_REQUEST', httpStatus: 400, code: 'validation_failed' });
  });

  it('429: TOO_MANY_REQUESTS, -32029', async () => {
    // A Starter Internal key allows 60 a minute. Calls go on until one is refused: a window that happens to end during
    // the run only means more calls, never a different answer.
    const client = internalClient(t, org.internalKey);
    let refused: unknown;
    for (let i = 0; i < 125 && !refused; i++)
      refused = await client.me.query().then(
        () => undefined,
        (e: unknown) => e,
      );
    const r = refusalOf(refused);
    expect(r).toEqual({ shapeCode: -32029, dataCode: 'TOO_MANY_REQUESTS', httpStatus: 429, code: 'rate_limited' });
  });
});
