import type { InternalRouter } from '@leadwire/core';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/** The typed client an internal frontend uses, with a session token or an Internal key. */
export const internalClient = (t: TestApp, key: string) =>
  createTRPCClient<InternalRouter>({ links: [httpLink({ url: `${t.origin}/api/trpc`, headers: { authorization: `Bearer ${key}` } })] });

/** The same procedures over REST under /api. */
export async function internalRest(t: TestApp, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${t.origin}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

/** The status and code a typed call was refused with (it must be refused). */
export async function trpcFailure(p: Promise<unknown>) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCClientError);
  const data = (err as TRPCClientError<InternalRouter>).data as { httpStatus: number; body: { code: string } };
  return { status: data.httpStatus, code: data.body.code };
}
