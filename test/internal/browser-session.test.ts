/**
 * The console's session (apps/server/src/http/browser-session.ts): on typed RPC, `x-leadwire-session: cookie` hands the
 * new session over as an HttpOnly cookie plus a readable CSRF cookie; the cookie then authenticates /api/trpc only,
 * and only with the CSRF header from our own origin. Raw HTTP, so the cookies and their attributes are what is seen.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { PASSWORD, sha256, signUp, uniqueEmail } from './accounts-support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());
afterEach(() => {
  t.clock.unfreeze();
  t.clock.set(new Date());
});

const OPT_IN = { 'x-leadwire-session': 'cookie' };
const csrfOf = (token: string) => createHmac('sha256', 'leadwire console csrf v1').update(token).digest('base64url');

interface Answer {
  status: number;
  body: any;
  cookies: string[];
}

/** One typed-RPC call as the tRPC link sends it: a mutation POSTs its input as JSON, a query is a GET. */
async function rpc(
  app: TestApp,
  path: string,
  opts: { input?: unknown; query?: boolean; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await fetch(`${app.origin}/api/trpc/${path}`, {
    method: opts.query ? 'GET' : 'POST',
    headers: { ...(opts.query ? {} : { 'content-type': 'application/json' }), ...opts.headers },
    ...(opts.query ? {} : { body: opts.input === undefined ? '' : JSON.stringify(opts.input) }),
  });
  return { status: res.status, body: await res.json(), cookies: res.headers.getSetCookie() };
}

/** The `{error, code}` code of a tRPC refusal. */
const codeOf = (a: Answer) => a.body?.error?.data?.body?.code;
const messageOf = (a: Answer) => a.body?.error?.data?.body?.error;

/** Cookie name to its whole Set-Cookie line. */
const byName = (lines: string[]) => new Map(lines.map((l) => [l.slice(0, l.indexOf('=')), l]));
const valueOf = (line: string | undefined) => line?.slice(line.indexOf('=') + 1).split(';')[0];
const attributes = (line: string | undefined) =>
  new Set(
    (line ?? '')
      .split(';')
      .slice(1)
      .map((a) => a.trim()),
  );

/** Signs a new owner in with the opt-in header: the answer, and the cookies a browser would then send. */
async function browserSignIn(app: TestApp = t, email?: string) {
  const owner = email ?? (await signUp(app)).email;
  const answer = await rpc(app, 'accounts.signIn', { input: { email: owner, password: PASSWORD }, headers: OPT_IN });
  const cookies = byName(answer.cookies);
  const token = valueOf(cookies.get('lw_session') ?? cookies.get('__Host-lw_session'))!;
  const csrf = valueOf(cookies.get('lw_csrf') ?? cookies.get('__Host-lw_csrf'))!;
  return { answer, cookies, token, csrf, email: owner, cookie: `lw_session=${token}; lw_csrf=${csrf}` };
}

const me = (cookie: string, headers: Record<string, string> = {}) => rpc(t, 'me', { query: true, headers: { cookie, ...headers } });

describe('browser sessions on typed RPC', () => {
  it('sign-in with the opt-in header sets the session and CSRF cookies over http, and answers an empty token', async () => {
    const s = await browserSignIn();
    expect(s.answer.status).toBe(200);
    expect(s.answer.body.result.data.token).toBe('');
    expect(s.answer.body.result.data.user.email).toBe(s.email);
    expect([...s.cookies.keys()].sort()).toEqual(['lw_csrf', 'lw_session']);
    expect(s.token).toMatch(/^lws_/);
    const expires = `Expires=${new Date(s.answer.body.result.data.expiresAt).toUTCString()}`;
    expect(attributes(s.cookies.get('lw_session'))).toEqual(new Set(['Path=/', 'SameSite=Strict', expires, 'HttpOnly']));
    // Readable by the console's script, bound to the session, and not the token.
    expect(attributes(s.cookies.get('lw_csrf'))).toEqual(new Set(['Path=/', 'SameSite=Strict', expires]));
    expect(s.csrf).toBe(csrfOf(s.token));
    expect(s.csrf).not.toContain(s.token.slice(4, 12));
  });

  it('without the opt-in header sign-in answers the token in the body as before, and sets no cookie', async () => {
    const { email } = await signUp(t);
    const a = await rpc(t, 'accounts.signIn', { input: { email, password: PASSWORD } });
    expect(a.status).toBe(200);
    expect(a.body.result.data.token).toMatch(/^lws_/);
    expect(a.cookies).toEqual([]);
  });

  it('sign-up, on the REST surface, ignores the header: the token is in the body and no cookie is set', async () => {
    const email = uniqueEmail();
    const res = await fetch(`${t.origin}/api/accounts/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...OPT_IN },
      body: JSON.stringify({ organizationName: 'Cookie-less', email, password: PASSWORD }),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { token: string }).token).toMatch(/^lws_/);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('sign-up over typed RPC with the header signs in by cookie', async () => {
    const email = uniqueEmail();
    const a = await rpc(t, 'accounts.signUp', { input: { organizationName: 'Console org', email, password: PASSWORD }, headers: OPT_IN });
    expect(a.status).toBe(200);
    expect(a.body.result.data.token).toBe('');
    const token = valueOf(byName(a.cookies).get('lw_session'))!;
    const ok = await me(`lw_session=${token}`, { 'x-csrf-token': csrfOf(token) });
    expect(ok.status).toBe(200);
  });

  it('the cookie with the right CSRF header authenticates, from our origin or none', async () => {
    const s = await browserSignIn();
    // t.origin (127.0.0.1) is neither APP_URL nor BASE_URL (localhost): the server's own name as the browser reached it.
    expect(t.origin).not.toBe(new URL(t.runtime.deps.config.APP_URL).origin);
    for (const origin of [
      undefined,
      new URL(t.runtime.deps.config.APP_URL).origin,
      new URL(t.runtime.deps.config.BASE_URL).origin,
      t.origin,
    ]) {
      const a = await me(s.cookie, { 'x-csrf-token': s.csrf, ...(origin ? { origin } : {}) });
      expect(a.status, String(origin)).toBe(200);
      expect(a.body.result.data).toMatchObject({ userId: s.answer.body.result.data.user.id, via: 'session' });
    }
  });

  it('refuses the cookie with 403 csrf_failed without the header, with a wrong one, or from a foreign origin', async () => {
    const s = await browserSignIn();
    const other = await browserSignIn();
    const cases: [string, Record<string, string>, RegExp][] = [
      ['no header', {}, /needs the x-csrf-token header/],
      ['empty header', { 'x-csrf-token': '' }, /needs the x-csrf-token header/],
      ['wrong header', { 'x-csrf-token': 'A'.repeat(43) }, /does not match/],
      ["another session's", { 'x-csrf-token': other.csrf }, /does not match/],
      ['a longer value', { 'x-csrf-token': `${s.csrf}x` }, /does not match/],
      ['foreign origin', { 'x-csrf-token': s.csrf, origin: 'https://evil.example' }, /own origin/],
      ['opaque origin', { 'x-csrf-token': s.csrf, origin: 'null' }, /own origin/],
    ];
    for (const [name, headers, message] of cases) {
      const a = await me(s.cookie, headers);
      expect([a.status, codeOf(a)], name).toEqual([403, 'csrf_failed']);
      expect(messageOf(a), name).toMatch(message);
      // A forged request must not make the browser drop its cookies.
      expect(a.cookies, name).toEqual([]);
    }
    // A mutation is held to the same rule.
    const out = await rpc(t, 'accounts.signOut', { headers: { cookie: s.cookie, ...OPT_IN } });
    expect([out.status, codeOf(out)]).toEqual([403, 'csrf_failed']);
    expect((await me(s.cookie, { 'x-csrf-token': s.csrf })).status).toBe(200);
  });

  it('a credential header wins over the cookie, and needs no CSRF header', async () => {
    const s = await browserSignIn();
    const other = await signUp(t);
    const a = await me(s.cookie, { authorization: `Bearer ${other.token}` });
    expect(a.status).toBe(200);
    expect(a.body.result.data.userId).toBe(other.userId);
  });

  it('a cookie alone is 401 on the REST surface, /v1 and the upload routes', async () => {
    const s = await browserSignIn();
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    for (const [method, path] of [
      ['GET', '/api/me'],
      ['GET', '/api/accounts/members'],
      ['GET', '/api/v1/contacts/search?email=a@example.com'],
      ['GET', `/api/files/${crypto.randomUUID()}`],
    ] as const) {
      const res = await fetch(`${t.origin}${path}`, { method, headers });
      expect(res.status, path).toBe(401);
    }
  });

  it('an API key or garbage in the cookie is refused and the cookies are cleared', async () => {
    const org = await t.newOrg();
    for (const token of [org.internalKey, 'lws_not_a_session']) {
      const a = await me(`lw_session=${token}`, { 'x-csrf-token': csrfOf(token) });
      expect([a.status, codeOf(a)], token.slice(0, 4)).toEqual([401, 'unauthorized']);
      expect(byName(a.cookies).get('lw_session')).toContain('Max-Age=0');
    }
  });

  it('sign-out with the opt-in header clears both cookies, and the cookie no longer works', async () => {
    const s = await browserSignIn();
    const out = await rpc(t, 'accounts.signOut', { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, ...OPT_IN } });
    expect(out.status).toBe(200);
    const cleared = byName(out.cookies);
    expect([...cleared.keys()].sort()).toEqual(['lw_csrf', 'lw_session']);
    expect(valueOf(cleared.get('lw_session'))).toBe('');
    expect(attributes(cleared.get('lw_session'))).toEqual(
      new Set(['Path=/', 'SameSite=Strict', 'Max-Age=0', 'Expires=Thu, 01 Jan 1970 00:00:00 GMT', 'HttpOnly']),
    );
    expect(attributes(cleared.get('lw_csrf'))).toEqual(
      new Set(['Path=/', 'SameSite=Strict', 'Max-Age=0', 'Expires=Thu, 01 Jan 1970 00:00:00 GMT']),
    );
    const after = await me(s.cookie, { 'x-csrf-token': s.csrf });
    expect([after.status, codeOf(after)]).toEqual([401, 'unauthorized']);
    expect(byName(after.cookies).get('lw_session')).toContain('Max-Age=0');
  });

  it('log-out-all ends the cookie session and every other one', async () => {
    const s = await browserSignIn();
    const second = await browserSignIn(t, s.email);
    const out = await rpc(t, 'accounts.logOutAll', { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, ...OPT_IN } });
    expect(out.status).toBe(200);
    expect(byName(out.cookies).get('lw_csrf')).toContain('Max-Age=0');
    for (const x of [s, second]) expect((await me(x.cookie, { 'x-csrf-token': x.csrf })).status).toBe(401);
  });

  it('an expired cookie session is 401, and the answer clears the cookies', async () => {
    const s = await browserSignIn();
    expect((await me(s.cookie, { 'x-csrf-token': s.csrf })).status).toBe(200);
    t.clock.set(new Date(new Date(s.answer.body.result.data.expiresAt).getTime() + 1000));
    const a = await me(s.cookie, { 'x-csrf-token': s.csrf });
    expect([a.status, codeOf(a)]).toEqual([401, 'unauthorized']);
    expect(byName(a.cookies).get('lw_csrf')).toContain('Max-Age=0');
  });

  it('accepting an invitation with the opt-in header signs the invitee in by cookie', async () => {
    const owner = await signUp(t);
    const token = `lwi_${randomBytes(48)
      .toString('base64')
      .replace(/[^0-9A-Za-z]/g, '')
      .slice(0, 43)}`;
    const email = uniqueEmail('invitee');
    await t.sql(
      `insert into invites (organization_id, invited_by_id, email, role, token_hash, created_at, expires_at)
       values (?, ?, ?, 'member', ?, now(), now() + interval '1 day')`,
      [owner.orgId, owner.userId, email, sha256(token)],
    );
    const a = await rpc(t, 'accounts.acceptInvite', { input: { token, password: 'my own password' }, headers: OPT_IN });
    expect(a.status).toBe(200);
    expect(a.body.result.data).toMatchObject({ token: '', user: { email, role: 'member' } });
    const session = valueOf(byName(a.cookies).get('lw_session'))!;
    expect((await me(`lw_session=${session}`, { 'x-csrf-token': csrfOf(session) })).body.result.data.role).toBe('member');
  });

  it('change-password hands the new session over as cookies; the old cookie stops', async () => {
    const s = await browserSignIn();
    const a = await rpc(t, 'accounts.changePassword', {
      input: { currentPassword: PASSWORD, newPassword: 'another good passphrase' },
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, ...OPT_IN },
    });
    expect(a.status).toBe(200);
    expect(a.body.result.data.token).toBe('');
    const token = valueOf(byName(a.cookies).get('lw_session'))!;
    expect(token).not.toBe(s.token);
    expect((await me(`lw_session=${token}`, { 'x-csrf-token': csrfOf(token) })).status).toBe(200);
    expect((await me(s.cookie, { 'x-csrf-token': s.csrf })).status).toBe(401);
  });
});

describe('browser sessions behind HTTPS', () => {
  let secure: TestApp;
  const output: string[] = [];
  beforeAll(async () => {
    const logStream = { write: (line: string) => void output.push(line) };
    secure = await initTestApp({ APP_URL: 'https://console.example.com', LOG_LEVEL: 'info' }, { logStream });
  });
  afterAll(async () => secure?.close());

  it('sets Secure __Host- cookies, reads only those, and takes the https origin', async () => {
    const s = await browserSignIn(secure);
    expect([...s.cookies.keys()].sort()).toEqual(['__Host-lw_csrf', '__Host-lw_session']);
    expect(attributes(s.cookies.get('__Host-lw_session'))).toEqual(
      new Set([
        'Path=/',
        'SameSite=Strict',
        'Secure',
        `Expires=${new Date(s.answer.body.result.data.expiresAt).toUTCString()}`,
        'HttpOnly',
      ]),
    );
    expect(attributes(s.cookies.get('__Host-lw_csrf')).has('Secure')).toBe(true);
    expect(attributes(s.cookies.get('__Host-lw_csrf')).has('HttpOnly')).toBe(false);
    const headers = { 'x-csrf-token': s.csrf, origin: 'https://console.example.com' };
    const ok = await rpc(secure, 'me', { query: true, headers: { cookie: `__Host-lw_session=${s.token}`, ...headers } });
    expect(ok.status).toBe(200);
    // The plain name is not this server's cookie: without a credential it is 401 as if absent.
    const plain = await rpc(secure, 'me', { query: true, headers: { cookie: `lw_session=${s.token}`, ...headers } });
    expect([plain.status, codeOf(plain)]).toEqual([401, 'unauthorized']);
    const http = await rpc(secure, 'me', {
      query: true,
      headers: { cookie: `__Host-lw_session=${s.token}`, ...headers, origin: 'http://console.example.com' },
    });
    expect([http.status, codeOf(http)]).toEqual([403, 'csrf_failed']);
    // Neither the session nor its CSRF value reaches the log, refused requests included.
    await secure.app.close();
    expect(output.length).toBeGreaterThan(0);
    expect(output.filter((l) => l.includes(s.token) || l.includes(s.csrf))).toEqual([]);
  });
});
