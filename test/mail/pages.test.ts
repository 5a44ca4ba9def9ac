import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, PASSWORD, refusal, signUp, tokenOf, uniqueEmail } from '../internal/accounts-support.ts';
import type { TestApp } from '../support/app.ts';
import type { SmtpInbox } from './smtp-inbox.ts';
import { type MailApp, startMailApp } from './support.ts';

const APP_URL = 'https://app.leadwire.test';
let t: TestApp;
let smtp: SmtpInbox;
let mail: MailApp;

beforeAll(async () => {
  mail = await startMailApp({ APP_URL });
  ({ t, smtp } = mail);
});
afterAll(() => mail?.close());

/** The emailed link, opened on the test server: same path and query, the server's own origin. */
function local(link: string): string {
  const url = new URL(link);
  expect(url.origin).toBe(APP_URL);
  return `${t.origin}${url.pathname}${url.search}`;
}

const get = (url: string) => fetch(url, { redirect: 'manual' });
const post = (path: string, fields: Record<string, string>, init: RequestInit = {}) =>
  fetch(`${t.origin}/${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    ...init,
  });

function expectPageHeaders(res: Response) {
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(res.headers.get('content-security-policy')).toMatch(
    /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
  );
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
}

/** Every input has a label tied to it by id. */
function expectLabelled(html: string) {
  const ids = [...html.matchAll(/<input id="([^"]+)"/g)].map((m) => m[1]);
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) expect(html).toContain(`<label for="${id}">`);
}

async function resetLink(email: string): Promise<string> {
  await client(t).accounts.requestPasswordReset.mutate({ email });
  return (await smtp.next(email)).link;
}

describe('the reset page', () => {
  it('shows a form, sets the password on POST, then signs in with it through the API', async () => {
    const owner = await signUp(t);
    const link = await resetLink(owner.email);
    const token = tokenOf(link);

    const page = await get(local(link));
    expect(page.status).toBe(200);
    expectPageHeaders(page);
    const html = await page.text();
    expectLabelled(html);
    expect(html).toContain('<form method="post" action="reset-password">');
    expect(html).toContain(`<input type="hidden" name="token" value="${token}">`);
    expect(html).not.toContain('<script');

    const done = await post('reset-password', { token, newPassword: 'my brand new password', confirmPassword: 'my brand new password' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('reset-password/done');
    const after = await get(new URL(done.headers.get('location')!, `${t.origin}/reset-password`).href);
    expect(after.status).toBe(200);
    expectPageHeaders(after);
    expect(await after.text()).toContain('Your new password is set');

    expect((await client(t).accounts.signIn.mutate({ email: owner.email, password: 'my brand new password' })).user.id).toBe(owner.userId);
    expect(await refusal(client(t).accounts.signIn.mutate({ email: owner.email, password: PASSWORD }))).toMatchObject({
      code: 'invalid_credentials',
    });

    // The link works once: the form posted again shows the service's own refusal.
    const again = await post('reset-password', { token, newPassword: 'another new password', confirmPassword: 'another new password' });
    expect(again.status).toBe(400);
    expectPageHeaders(again);
    expect(await again.text()).toContain('This password reset link is invalid, expired or already used; request a new one');
  });

  it('shows the form again with each error beside its field, announced, and changes nothing', async () => {
    const owner = await signUp(t);
    const token = tokenOf(await resetLink(owner.email));

    const short = await post('reset-password', { token, newPassword: 'short', confirmPassword: 'short' });
    expect(short.status).toBe(400);
    expectPageHeaders(short);
    const html = await short.text();
    expect(html).toContain('role="alert"');
    expect(html).toMatch(/<input id="newPassword"[^>]* aria-invalid="true" aria-describedby="newPassword-hint newPassword-error">/);
    expect(html).toContain('<p class="error" id="newPassword-error">password must be at least 8 characters</p>');
    expect(html).toContain(`value="${token}"`);
    expect(html).not.toContain('value="short"');

    const differ = await post('reset-password', { token, newPassword: 'long enough password', confirmPassword: 'long enough passwort' });
    expect(differ.status).toBe(400);
    const h2 = await differ.text();
    expect(h2).toMatch(/<input id="confirmPassword"[^>]* aria-invalid="true" aria-describedby="confirmPassword-error">/);
    expect(h2).toContain('The two passwords are not the same');

    // Neither attempt spent the token or changed the password.
    expect((await client(t).accounts.signIn.mutate({ email: owner.email, password: PASSWORD })).user.id).toBe(owner.userId);
    expect(
      (await post('reset-password', { token, newPassword: 'long enough password', confirmPassword: 'long enough password' })).status,
    ).toBe(303);
  });

  it('answers a missing, foreign or unknown token with a helpful HTML error page', async () => {
    for (const url of [
      '/reset-password',
      '/reset-password?token=',
      '/reset-password?token=lwi_an-invite-token',
      '/reset-password?token=a&token=b',
    ]) {
      const res = await get(`${t.origin}${url}`);
      expect(res.status, url).toBe(400);
      expectPageHeaders(res);
      const html = await res.text();
      expect(html, url).toContain('This password reset link is incomplete');
      expect(html, url).not.toContain('<form');
    }
    const unknown = await post('reset-password', {
      token: 'lwr_nope',
      newPassword: 'long enough password',
      confirmPassword: 'long enough password',
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('invalid, expired or already used');
  });

  it('escapes every value it shows', async () => {
    const hostile = 'lwr_"><script>alert(1)</script>&';
    const res = await get(`${t.origin}/reset-password?token=${encodeURIComponent(hostile)}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('value="lwr_&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;"');
  });

  it('refuses what is not a small form, with an HTML page and the same headers', async () => {
    const json = await fetch(`${t.origin}/reset-password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"token":"lwr_x"}',
    });
    expect(json.status).toBe(415);
    expectPageHeaders(json);
    expect(await json.text()).toContain('Send the form from the page itself.');

    const big = await post('reset-password', { token: 'lwr_x', newPassword: 'x'.repeat(20_000) });
    expect(big.status).toBe(413);
    expectPageHeaders(big);

    const empty = await fetch(`${t.origin}/reset-password`, { method: 'POST' });
    expect(empty.status).toBe(415);
  });
});

describe('the invitation page', () => {
  it('accepts with a chosen password and name; the member then signs in through the API', async () => {
    const owner = await signUp(t);
    const email = uniqueEmail('invitee');
    await client(t, owner.token).accounts.invite.mutate({ email, role: 'admin' });
    const link = (await smtp.next(email)).link;
    expect(link).toMatch(/^https:\/\/app\.leadwire\.test\/accept-invite\?token=lwi_/);
    const token = tokenOf(link);

    const page = await get(local(link));
    expect(page.status).toBe(200);
    expectPageHeaders(page);
    const html = await page.text();
    expectLabelled(html);
    expect(html).toContain('<form method="post" action="accept-invite">');

    // A bad name is shown back escaped, next to the error of the too-short password.
    const name = 'Ada <b>"Lovelace"</b>';
    const bad = await post('accept-invite', { token, name, password: 'short', confirmPassword: 'short' });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(badHtml).toContain('value="Ada &lt;b&gt;&quot;Lovelace&quot;&lt;/b&gt;"');
    expect(badHtml).toContain('<p class="error" id="password-error">password must be at least 8 characters</p>');

    const ok = await post('accept-invite', { token, name, password: 'the invitee password', confirmPassword: 'the invitee password' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('accept-invite/done');
    expect(await (await get(`${t.origin}/accept-invite/done`)).text()).toContain('You have joined the organization.');

    const session = await client(t).accounts.signIn.mutate({ email, password: 'the invitee password' });
    expect(session.user).toMatchObject({ email, role: 'admin', orgId: owner.orgId, name });

    const again = await post('accept-invite', { token, password: 'the invitee password', confirmPassword: 'the invitee password' });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('This invitation is invalid, expired or already accepted; ask for a new one');
  });

  it('refuses a form holding a NUL character whole, and saves nothing', async () => {
    const owner = await signUp(t);
    const email = uniqueEmail('nul');
    await client(t, owner.token).accounts.invite.mutate({ email, role: 'member' });
    const token = tokenOf((await smtp.next(email)).link);
    const res = await post('accept-invite', {
      token,
      name: 'Ada\u0000',
      password: 'the invitee password',
      confirmPassword: 'the invitee password',
    });
    expect(res.status).toBe(400);
    expectPageHeaders(res);
    expect(await res.text()).toContain('The form holds a character that cannot be saved');
    expect(await t.sql('select 1 from users where email = ?', [email])).toEqual([]);
    expect((await post('accept-invite', { token, password: 'the invitee password', confirmPassword: 'the invitee password' })).status).toBe(
      303,
    );
  });

  it('answers a reset token or none with the invitation\u2019s error page', async () => {
    for (const url of ['/accept-invite', '/accept-invite?token=lwr_a-reset-token']) {
      const res = await get(`${t.origin}${url}`);
      expect(res.status, url).toBe(400);
      expect(await res.text()).toContain('This invitation link is incomplete');
    }
  });
});
