import { randomUUID } from 'node:crypto';
import type { InternalRouter } from '@leadwire/core';
import { generateToken, hashKey } from '#core/auth/key-material.ts';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { expect } from 'vitest';
import { answerOf, type TestApp } from '../support/app.ts';

export type Client = ReturnType<typeof typedClient>;

export function typedClient(t: TestApp, token: string) {
  return createTRPCClient<InternalRouter>({
    links: [httpLink({ url: `${t.origin}/api/trpc`, headers: { authorization: `Bearer ${token}` } })],
  });
}

/** REST under /api, JSON in and out. */
export async function rest(t: TestApp, method: string, path: string, token: string, body?: unknown) {
  return restRaw(t, method, path, token, body === undefined ? undefined : JSON.stringify(body));
}

/** REST under /api with the body sent as given (bytes, malformed JSON) and extra headers; the answer parsed as JSON. */
export async function restRaw(
  t: TestApp,
  method: string,
  path: string,
  token: string,
  body?: BodyInit,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${t.origin}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body }),
  });
  const { status, body: answer } = await answerOf(res);
  return { status, body: answer };
}

/** What a typed call was refused with: HTTP status and our `{ error, code }` body. */
export async function refusal(call: Promise<unknown>): Promise<{ status: number; error: string; code: string; body: any }> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the call to be refused').toBeInstanceOf(TRPCClientError);
  const data = (err as TRPCClientError<InternalRouter>).data as { httpStatus: number; body: { error: string; code: string } };
  return { status: data.httpStatus, error: data.body.error, code: data.body.code, body: data.body };
}

export interface TestOrg {
  orgId: string;
  ownerId: string;
  /** The owner's Internal key. */
  owner: Client;
  ownerKey: string;
  publicKey: string;
  /** A signed-in session of the owner (token `lws_...`). */
  session: Client;
  admin: Client;
  member: Client;
  memberKey: string;
}

/** A user of the organization with a role, straight into the table: these tests are about contacts, not sign-up. */
async function user(t: TestApp, orgId: string, role: 'admin' | 'member') {
  const id = randomUUID();
  await t.sql(`insert into users (id, organization_id, email, password_hash, role) values (?, ?, ?, 'unused', ?)`, [
    id,
    orgId,
    `${role}-${id}@example.com`,
    role,
  ]);
  return id;
}

async function session(t: TestApp, orgId: string, userId: string) {
  const token = generateToken('lws_');
  await t.sql(
    `insert into sessions (organization_id, user_id, token_hash, user_epoch, expires_at) values (?, ?, ?, 0, now() + interval '1 day')`,
    [orgId, userId, hashKey(token)],
  );
  return token;
}

export async function newTestOrg(t: TestApp, plan?: 'starter' | 'pro' | 'max'): Promise<TestOrg> {
  const { orgId, userId, internalKey, publicKey } = await t.newOrg(plan ? { plan } : {});
  const adminId = await user(t, orgId, 'admin');
  const memberId = await user(t, orgId, 'member');
  const adminKey = await t.newKey({ orgId, userId: adminId, name: 'admin', type: 'internal' });
  const memberKey = await t.newKey({ orgId, userId: memberId, name: 'member', type: 'internal' });
  return {
    orgId,
    ownerId: userId,
    owner: typedClient(t, internalKey),
    ownerKey: internalKey,
    publicKey,
    session: typedClient(t, await session(t, orgId, userId)),
    admin: typedClient(t, adminKey),
    member: typedClient(t, memberKey),
    memberKey,
  };
}

export interface StoredEvent {
  event: string;
  source: string | null;
  data: any;
}

/** Outbox events of an organization about one contact (or all), oldest first. */
export async function eventsOf(t: TestApp, orgId: string, contactId?: string): Promise<StoredEvent[]> {
  const rows = await t.sql<{ event: string; payload: any }>(
    `select event, payload from outbox_events where organization_id = ?
     ${contactId ? `and payload->'data'->'contact'->>'id' = '${contactId}'` : ''} order by created_at, ctid`,
    [orgId],
  );
  return rows.map((r) => ({ event: r.event, source: r.payload.source ?? null, data: r.payload.data }));
}

export async function contactCount(t: TestApp, orgId: string): Promise<number> {
  const [row] = await t.sql<{ n: number }>('select contact_count as n from contact_counters where organization_id = ?', [orgId]);
  return row!.n;
}
