import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { InternalRouter } from '@leadwire/core';
import { findSession } from '#core/auth/sessions.ts';
import type { InternalActor } from '#core/auth/actor.ts';
import { passwordResetJob, type ResetRequestPayload } from '#core/accounts/reset-job.ts';
import type { JobDefinition } from '#core/jobs/boss.ts';
import { createSmtpMailer } from '#core/mail/mailer.ts';
import { MAIL_QUEUE, sendMailJob } from '#core/mail/send-job.ts';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { expect } from 'vitest';
import { Arrivals, startSmtpInbox } from '../mail/smtp-inbox.ts';
import { type TestApp, withoutRequestId } from '../support/app.ts';

export const PASSWORD = 'correct horse battery staple';
export const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

export interface Reply {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
}

/**
 * A REST call under /api over node:http, so a test can choose the client's address: every 127.x.y.z is loopback on
 * Linux, and the server sees `from` as the caller's IP (the brute-force throttle keys on it).
 */
export function rest(
  t: TestApp,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; from?: string } = {},
): Promise<Reply> {
  const url = new URL(`${t.origin}/api${path}`);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress: opts.from ?? '127.0.0.1',
        headers: {
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {
            // left as text: a non-JSON answer is itself something to assert on
          }
          // Compared whole between known and unknown accounts: the request id, which differs, is checked and dropped.
          const status = res.statusCode ?? 0;
          resolve({
            status,
            body: withoutRequestId(status, body, res.headers['x-request-id']),
            headers: res.headers,
            ms: performance.now() - started,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The typed client a frontend would use, with a session token or an Internal key (or nothing). */
export function client(t: TestApp, token?: string) {
  return createTRPCClient<InternalRouter>({
    links: [httpLink({ url: `${t.origin}/api/trpc`, headers: token ? { authorization: `Bearer ${token}` } : {} })],
  });
}

/** The `{ status, code, ... }` a typed call was refused with. */
export async function refusal(call: Promise<unknown>): Promise<{ status: number; code: string; body: any }> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the call to be refused').toBeInstanceOf(TRPCClientError);
  const data = (err as TRPCClientError<InternalRouter>).data as { httpStatus: number; body: { code: string } };
  return { status: data.httpStatus, code: data.body.code, body: data.body };
}

export const MAIL_FROM = 'Leadwire <no-reply@leadwire.test>';

/**
 * Where the application's emails arrive: a real SMTP server, with the mail and reset-request workers of the test app
 * sending to it over SMTP. Everything here waits on arrivals, never on a timer.
 */
export async function inbox(t: TestApp) {
  const smtp = await startSmtpInbox();
  const deps = t.runtime.deps;
  const reset = passwordResetJob(deps);
  const handled = new Arrivals<string>();
  // Observed, not replaced: the real handler runs, then the test hears that its transaction has committed.
  const observed: JobDefinition<ResetRequestPayload> = { ...reset, handle: async (p) => (await reset.handle(p), handled.push(p.email)) };
  await t.runtime.boss.work([sendMailJob(deps, createSmtpMailer({ url: smtp.url, from: MAIL_FROM })), observed]);
  return {
    smtp,
    /** The next email to `to`, as the SMTP server received it. */
    next: (to: string) => smtp.next(to),
    /** Resolves once a reset request for `email` has been handled: its token, if any, and its email are queued. */
    resetHandled: (email: string) => handled.take((e) => e === email),
    /** Emails queued (sent or not) to `to`: once the requests are handled, all that will ever arrive. */
    queuedTo: async (to: string) =>
      (await t.sql<{ n: number }>(`select count(*)::int as n from pgboss.job where name = ? and data->>'to' = ?`, [MAIL_QUEUE, to]))[0]!.n,
    close: () => smtp.close(),
  };
}

export type Inbox = Awaited<ReturnType<typeof inbox>>;

export const tokenOf = (link: string) => new URL(link).searchParams.get('token') ?? '';

let seq = 0;
export const uniqueEmail = (label = 'user') => `${label}${++seq}-${Math.random().toString(36).slice(2, 8)}@example.com`;

/** Signs up a new organization through the typed client: its owner's session, email and ids. */
export async function signUp(t: TestApp, label = 'owner') {
  const email = uniqueEmail(label);
  const s = await client(t).accounts.signUp.mutate({ organizationName: `Org of ${email}`, email, password: PASSWORD });
  return { token: s.token, email, userId: s.user.id, orgId: s.user.orgId };
}

/** A Public key (tried on /api/v1) and an Internal key (tried on /api/me) created by the user. */
export async function keysOf(t: TestApp, orgId: string, userId: string) {
  return {
    publicKey: await t.newKey({ orgId, userId, name: 'public', type: 'public', permissions: ['contacts:read'] }),
    internalKey: await t.newKey({ orgId, userId, name: 'internal', type: 'internal' }),
  };
}

/** [status on /api/v1 with the Public key, status on /api/me with the Internal key]: 404 and 200 while they work. */
export async function keyStatuses(t: TestApp, keys: { publicKey: string; internalKey: string }): Promise<[number, number]> {
  const v1 = await fetch(`${t.v1}/contacts/search?email=nobody@example.com`, { headers: { authorization: `Bearer ${keys.publicKey}` } });
  const me = await rest(t, 'GET', '/me', { token: keys.internalKey });
  return [v1.status, me.status];
}
export const WORKING: [number, number] = [404, 200];
export const DEAD: [number, number] = [401, 401];

/** The actor a (live) session token authenticates as, through the same lookup the procedures use. */
export async function sessionActor(t: TestApp, token: string): Promise<InternalActor> {
  const actor = await findSession(t.runtime.deps.db, token, t.clock.now());
  if (!actor) throw new Error('the session is not live');
  return actor;
}
