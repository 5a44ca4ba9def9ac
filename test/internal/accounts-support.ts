import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { InternalRouter } from '@leadwire/core';
import { findSession } from '@leadwire/core/auth/sessions.ts';
import type { InternalActor } from '@leadwire/core/auth/actor.ts';
import { type MailMessage, setMailer } from '@leadwire/core/mail/mailer.ts';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { expect } from 'vitest';
import type { TestApp } from '../support/app.ts';

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
export function rest(t: TestApp, method: string, path: string, opts: { token?: string; body?: unknown; from?: string } = {}): Promise<Reply> {
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
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers, ms: performance.now() - started });
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

/** Catches what the application emails, in place of the development mailer. */
export function inbox(t: TestApp) {
  const messages: MailMessage[] = [];
  const waiting: { to: string; resolve: (m: MailMessage) => void }[] = [];
  setMailer(t.runtime.deps, {
    send: async (m) => {
      messages.push(m);
      for (const w of waiting.filter((x) => x.to === m.to)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(m);
      }
    },
  });
  return {
    messages,
    /** The next email to `to` (or one already received and not yet taken). */
    next(to: string, timeoutMs = 5_000): Promise<MailMessage> {
      const i = messages.findIndex((m) => m.to === to);
      if (i >= 0) return Promise.resolve(messages.splice(i, 1)[0]!);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no email to ${to} within ${timeoutMs} ms`)), timeoutMs);
        waiting.push({
          to,
          resolve: (m) => {
            clearTimeout(timer);
            messages.splice(messages.indexOf(m), 1);
            resolve(m);
          },
        });
      });
    },
  };
}

export const tokenOf = (link: string) => new URL(link).hash.replace(/^#token=/, '');

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
