import { createLogMailer } from '#core/mail/mailer.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import {
  client,
  DEAD,
  type Inbox,
  inbox,
  keyStatuses,
  keysOf,
  MAIL_FROM,
  PASSWORD,
  refusal,
  rest,
  sha256,
  signUp,
  tokenOf,
  uniqueEmail,
} from './accounts-support.ts';

let t: TestApp;
let mail: Inbox;
beforeAll(async () => {
  t = await initTestApp({ APP_URL: 'https://app.leadwire.test' });
  mail = await inbox(t);
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const NEW_PASSWORD = 'a fresh new password';
const MINUTE_MS = 60_000;
const meStatus = async (token: string) => (await rest(t, 'GET', '/me', { token })).status;

async function requestReset(email: string) {
  expect(await client(t).accounts.requestPasswordReset.mutate({ email })).toEqual({ ok: true });
  return tokenOf((await mail.next(email.trim().toLowerCase())).link);
}

describe('password reset', () => {
  it('emails a one-time link to the app\u2019s reset page over SMTP, and stores only the token\u2019s hash', async () => {
    const owner = await signUp(t);
    const r = await rest(t, 'POST', '/accounts/password-reset/request', { body: { email: owner.email.toUpperCase() } });
    expect(r).toMatchObject({ status: 200, body: { ok: true } });
    const message = await mail.next(owner.email);
    expect(message).toMatchObject({
      envelope: { from: 'no-reply@leadwire.test', to: [owner.email] },
      from: [{ address: 'no-reply@leadwire.test', name: 'Leadwire' }],
      to: owner.email,
      subject: 'Reset your Leadwire password',
      template: 'password_reset',
    });
    expect(MAIL_FROM).toContain('no-reply@leadwire.test');
    expect(message.link).toMatch(/^https:\/\/app\.leadwire\.test\/reset-password\?token=lwr_[0-9A-Za-z]{43}$/);
    expect(message.text).toContain('within 1 hour');

    const token = tokenOf(message.link);
    const rows = await t.sql<any>('select * from password_reset_tokens where user_id = ?', [owner.userId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(sha256(token));
    expect(JSON.stringify(rows)).not.toContain(token.slice(4));
    expect(new Date(rows[0].expires_at).getTime() - new Date(rows[0].created_at).getTime()).toBe(60 * MINUTE_MS);
  });

  it('answers an unknown email exactly like a known one, and sends nothing', async () => {
    const owner = await signUp(t);
    const known = await rest(t, 'POST', '/accounts/password-reset/request', { body: { email: owner.email } });
    const nobody = uniqueEmail('nobody');
    const unknown = await rest(t, 'POST', '/accounts/password-reset/request', { body: { email: nobody } });
    expect(unknown.status).toBe(known.status);
    expect(unknown.body).toEqual(known.body);
    await mail.next(owner.email);
    await mail.resetHandled(nobody);
    expect(await mail.queuedTo(nobody)).toBe(0);
    expect(await t.sql('select 1 from password_reset_tokens t join users u on u.id = t.user_id where u.email = ?', [nobody])).toEqual([]);
  });

  it('sets the password, ends every session and key of the user, and cannot be used twice', async () => {
    const owner = await signUp(t);
    const keys = await keysOf(t, owner.orgId, owner.userId);
    const token = await requestReset(owner.email);

    const r = await rest(t, 'POST', '/accounts/password-reset/complete', { body: { token, newPassword: NEW_PASSWORD } });
    expect(r).toMatchObject({ status: 200, body: { ok: true } });
    expect(await meStatus(owner.token)).toBe(401);
    expect(await keyStatuses(t, keys)).toEqual(DEAD);
    expect(await refusal(client(t).accounts.signIn.mutate({ email: owner.email, password: PASSWORD }))).toMatchObject({
      code: 'invalid_credentials',
    });
    const s = await client(t).accounts.signIn.mutate({ email: owner.email, password: NEW_PASSWORD });
    expect(await meStatus(s.token)).toBe(200);

    const again = await refusal(client(t).accounts.resetPassword.mutate({ token, newPassword: 'attacker password' }));
    expect(again).toMatchObject({ status: 400, code: 'invalid_token' });
    expect(await meStatus(s.token)).toBe(200);
  });

  it('takes a token until its hour is up, then refuses it and changes nothing', async () => {
    try {
      const owner = await signUp(t);
      t.clock.freeze();
      const early = await requestReset(owner.email);
      t.clock.advance(60 * MINUTE_MS - 1);
      await client(t).accounts.resetPassword.mutate({ token: early, newPassword: NEW_PASSWORD });
      expect(await t.sql('select credential_epoch from users where id = ?', [owner.userId])).toEqual([{ credential_epoch: 1 }]);

      const s = await client(t).accounts.signIn.mutate({ email: owner.email, password: NEW_PASSWORD });
      const late = await requestReset(owner.email);
      t.clock.advance(60 * MINUTE_MS);
      expect(await refusal(client(t).accounts.resetPassword.mutate({ token: late, newPassword: 'too late a password' }))).toMatchObject({
        status: 400,
        code: 'invalid_token',
      });
      expect(await meStatus(s.token)).toBe(200);
      expect(await t.sql('select credential_epoch from users where id = ?', [owner.userId])).toEqual([{ credential_epoch: 1 }]);
      expect(await t.sql('select used_at from password_reset_tokens where token_hash = ?', [sha256(late)])).toEqual([{ used_at: null }]);
    } finally {
      t.clock.unfreeze();
      t.clock.set(new Date());
    }
  });

  it('refuses an unknown token', async () => {
    const r = await rest(t, 'POST', '/accounts/password-reset/complete', { body: { token: 'lwr_nope', newPassword: NEW_PASSWORD } });
    expect(r).toMatchObject({ status: 400, body: { code: 'invalid_token' } });
  });

  it('a reset voids the other links still outstanding', async () => {
    const owner = await signUp(t);
    const first = await requestReset(owner.email);
    const second = await requestReset(owner.email);
    await client(t).accounts.resetPassword.mutate({ token: second, newPassword: NEW_PASSWORD });
    expect(await refusal(client(t).accounts.resetPassword.mutate({ token: first, newPassword: 'something else entirely' }))).toMatchObject({
      code: 'invalid_token',
    });
  });

  it('sends at most 5 reset emails per user per hour', async () => {
    const owner = await signUp(t);
    await Promise.all(Array.from({ length: 7 }, () => client(t).accounts.requestPasswordReset.mutate({ email: owner.email })));
    for (let i = 0; i < 7; i++) await mail.resetHandled(owner.email);
    expect(await mail.queuedTo(owner.email)).toBe(5);
    expect(await t.sql('select count(*)::int as n from password_reset_tokens where user_id = ?', [owner.userId])).toEqual([{ n: 5 }]);
    const links = new Set<string>();
    for (let i = 0; i < 5; i++) links.add((await mail.next(owner.email)).link);
    expect(links.size).toBe(5);
  });

  it('counts the 5 over the last hour by the clock: the sixth waits until the first is an hour old', async () => {
    const owner = await signUp(t);
    const request = async () => {
      await client(t).accounts.requestPasswordReset.mutate({ email: owner.email });
      await mail.resetHandled(owner.email);
    };
    for (let i = 0; i < 5; i++) await request();
    try {
      t.clock.advance(59 * MINUTE_MS);
      await request();
      expect(await mail.queuedTo(owner.email)).toBe(5);
      t.clock.advance(2 * MINUTE_MS);
      await request();
      expect(await mail.queuedTo(owner.email)).toBe(6);
      expect(await t.sql('select count(*)::int as n from password_reset_tokens where user_id = ?', [owner.userId])).toEqual([{ n: 6 }]);
      for (let i = 0; i < 6; i++) await mail.next(owner.email);
    } finally {
      // Later tests compare against rows stamped by PostgreSQL's own now().
      t.clock.advance(-61 * MINUTE_MS);
    }
  });

  it('sends no link to a deactivated user', async () => {
    const owner = await signUp(t);
    await t.sql('update users set active = false where id = ?', [owner.userId]);
    await client(t).accounts.requestPasswordReset.mutate({ email: owner.email });
    await mail.resetHandled(owner.email);
    expect(await t.sql('select 1 from password_reset_tokens where user_id = ?', [owner.userId])).toEqual([]);
    expect(await mail.queuedTo(owner.email)).toBe(0);
  });

  it('lifts the sign-in throttle of the address the reset came from: the owner proved control through the email', async () => {
    const owner = await signUp(t);
    // The typed client calls from 127.0.0.1: five failures of that pair make it wait.
    await t.sql(`insert into sign_in_attempts (email, ip, succeeded) select ?, '127.0.0.1', false from generate_series(1, 5)`, [
      owner.email,
    ]);
    expect(await refusal(client(t).accounts.signIn.mutate({ email: owner.email, password: PASSWORD }))).toMatchObject({
      status: 429,
      code: 'too_many_attempts',
    });
    await client(t).accounts.resetPassword.mutate({ token: await requestReset(owner.email), newPassword: NEW_PASSWORD });
    expect((await client(t).accounts.signIn.mutate({ email: owner.email, password: NEW_PASSWORD })).user.id).toBe(owner.userId);
  });
});

describe('the development mailer', () => {
  it('writes the link to the log, and that is all it does', async () => {
    const lines: { obj: any; msg?: string }[] = [];
    const log = { info: (obj: object, msg?: string) => lines.push({ obj, msg }), warn() {}, error() {}, debug() {} };
    await createLogMailer(log).send({
      to: 'a@example.com',
      subject: 'S',
      text: 'body',
      template: 'password_reset',
      link: 'https://x/reset-password?token=lwr_abc',
    });
    expect(lines).toEqual([
      {
        obj: { mail: { to: 'a@example.com', subject: 'S', template: 'password_reset', link: 'https://x/reset-password?token=lwr_abc' } },
        msg: expect.any(String),
      },
    ]);
  });
});
