import { assertKeyCreationUnlocked } from '#core/accounts/confirmation.ts';
import { hashPassword } from '#core/accounts/passwords.ts';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import {
  client,
  DEAD,
  keyStatuses,
  keysOf,
  PASSWORD,
  refusal,
  type Reply,
  rest,
  sessionActor,
  sha256,
  signUp,
  uniqueEmail,
  WORKING,
} from './accounts-support.ts';

let t: TestApp;
let memberHash: string;
beforeAll(async () => {
  t = await initTestApp();
  memberHash = await hashPassword(PASSWORD);
});
afterAll(async () => t?.close());
// Tests that move the server's clock put it back, so the next test starts at the wall clock's time.
afterEach(() => {
  t.clock.unfreeze();
  t.clock.set(new Date());
});

const DAY_MS = 86_400_000;
const meStatus = async (token: string) => (await rest(t, 'GET', '/me', { token })).status;
const signIn = (email: string, password = PASSWORD) => client(t).accounts.signIn.mutate({ email, password });

/** A second user of the organization, with the test password, to show what an action does not touch. */
async function colleague(orgId: string) {
  const email = uniqueEmail('colleague');
  const [u] = await t.sql<{ id: string }>(
    `insert into users (organization_id, email, password_hash, role) values (?, ?, ?, 'member') returning id`,
    [orgId, email, memberHash],
  );
  const session = await signIn(email);
  return { userId: u!.id, email, token: session.token, keys: await keysOf(t, orgId, u!.id) };
}

describe('sign-up and sign-in', () => {
  it('signs up an organization and its owner, signed in, over REST (201) and typed', async () => {
    const email = uniqueEmail();
    const r = await rest(t, 'POST', '/accounts/sign-up', {
      body: { organizationName: 'Acme', email: ` ${email.toUpperCase()} `, password: PASSWORD, name: 'Ada' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ token: expect.stringMatching(/^lws_[0-9A-Za-z]{43}$/), user: { email, name: 'Ada', role: 'owner' } });
    expect(await rest(t, 'GET', '/me', { token: r.body.token })).toMatchObject({
      status: 200,
      body: { userId: r.body.user.id, orgId: r.body.user.orgId, role: 'owner', via: 'session' },
    });
    expect(await t.sql('select name from organizations where id = ?', [r.body.user.orgId])).toEqual([{ name: 'Acme' }]);

    const typed = await signUp(t);
    expect(await client(t, typed.token).me.query()).toMatchObject({ userId: typed.userId, via: 'session' });
  });

  it('stores sessions hashed, for 30 days from the server clock, under the user\u2019s credential epoch', async () => {
    const at = new Date('2031-03-04T05:06:07.089Z');
    t.clock.freeze(at);
    const { token, userId, email } = await signUp(t);
    const rows = await t.sql<any>('select * from sessions where user_id = ?', [userId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(sha256(token));
    expect(JSON.stringify(rows)).not.toContain(token.slice(4));
    expect(rows[0].user_epoch).toBe(0);
    expect(new Date(rows[0].created_at)).toEqual(at);
    expect(new Date(rows[0].expires_at)).toEqual(new Date(at.getTime() + 30 * DAY_MS));
    expect((await signIn(email)).expiresAt).toBe('2031-04-03T05:06:07.089Z');
  });

  it('refuses a taken email, whatever its case', async () => {
    const owner = await signUp(t);
    const { email } = owner;
    const err = await refusal(
      client(t).accounts.signUp.mutate({ organizationName: 'Again', email: email.toUpperCase(), password: PASSWORD }),
    );
    expect(err).toMatchObject({ status: 409, code: 'email_taken' });

    // A sign-up racing another for one new email: the other's row is not yet committed when this one checks, so this
    // one meets the unique index instead; it must still hear email_taken, not a 500.
    const raced = uniqueEmail('race');
    // Its own connection, outside the ORM, so the server's transaction cannot join this one.
    const other = new pg.Client(t.runtime.deps.config.DATABASE_URL);
    await other.connect();
    let r: Reply;
    try {
      await other.query('begin');
      await other.query(`insert into users (organization_id, email, password_hash) values ($1, $2, 'x')`, [owner.orgId, raced]);
      const pending = rest(t, 'POST', '/accounts/sign-up', { body: { organizationName: 'Race', email: raced, password: PASSWORD } });
      await vi.waitFor(
        async () =>
          expect(
            await t.sql(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like 'insert into "users" %'`),
          ).toHaveLength(1),
        { timeout: 15_000, interval: 50 },
      );
      await other.query('commit');
      r = await pending;
    } finally {
      await other.end();
    }
    expect(r).toMatchObject({ status: 409, body: { code: 'email_taken' } });
  });

  it('signs in with the right password only, and an unknown email answers like a wrong password', async () => {
    const { email, userId } = await signUp(t);
    const s = await signIn(` ${email.toUpperCase()}`);
    expect(s.user).toMatchObject({ id: userId, role: 'owner' });
    expect(await meStatus(s.token)).toBe(200);

    const wrong = await rest(t, 'POST', '/accounts/sign-in', { body: { email, password: 'not the password' } });
    const unknown = await rest(t, 'POST', '/accounts/sign-in', { body: { email: uniqueEmail('nobody'), password: 'not the password' } });
    expect(wrong).toMatchObject({ status: 401, body: { code: 'invalid_credentials', error: 'Wrong email or password' } });
    expect(unknown.status).toBe(wrong.status);
    expect(unknown.body).toEqual(wrong.body);
  });

  it('refuses a weak password at sign-up with validation_failed', async () => {
    const err = await refusal(client(t).accounts.signUp.mutate({ organizationName: 'X', email: uniqueEmail(), password: 'short' }));
    expect(err).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('ends a session at its expiry, 30 days after sign-in, however much it was used', async () => {
    t.clock.freeze();
    const { token, email } = await signUp(t);
    t.clock.advance(29 * DAY_MS);
    expect(await meStatus(token)).toBe(200);
    t.clock.advance(DAY_MS - 1);
    expect(await meStatus(token)).toBe(200);
    t.clock.advance(1);
    expect(await meStatus(token)).toBe(401);
    // A fresh sign-in at that moment lives another 30 days.
    expect(await meStatus((await signIn(email)).token)).toBe(200);
  });
});

describe('sign-out and log out of all devices', () => {
  it('signs out this session only', async () => {
    const { email, token } = await signUp(t);
    const other = await signIn(email);
    expect(await client(t, token).accounts.signOut.mutate()).toEqual({ ok: true });
    expect(await meStatus(token)).toBe(401);
    expect(await meStatus(other.token)).toBe(200);
    expect(await t.sql('select 1 from sessions where token_hash = ?', [sha256(token)])).toEqual([]);
    // REST as well
    expect(await rest(t, 'POST', '/accounts/sign-out', { token: other.token, body: {} })).toMatchObject({
      status: 200,
      body: { ok: true },
    });
    expect(await meStatus(other.token)).toBe(401);
  });

  it('refuses sign-out with an Internal key: there is no session to end', async () => {
    const { orgId, userId } = await signUp(t);
    const { internalKey } = await keysOf(t, orgId, userId);
    expect(await refusal(client(t, internalKey).accounts.signOut.mutate())).toMatchObject({ status: 403, code: 'session_required' });
  });

  it('ends every session of the user and every key the user created, and nobody else\u2019s', async () => {
    const owner = await signUp(t);
    const second = await signIn(owner.email);
    const keys = await keysOf(t, owner.orgId, owner.userId);
    const mate = await colleague(owner.orgId);
    expect(await keyStatuses(t, keys)).toEqual(WORKING);

    const r = await rest(t, 'POST', '/accounts/log-out-all', { token: owner.token, body: {} });
    expect(r).toMatchObject({ status: 200, body: { ok: true } });
    expect([await meStatus(owner.token), await meStatus(second.token)]).toEqual([401, 401]);
    expect(await keyStatuses(t, keys)).toEqual(DEAD);

    expect(await meStatus(mate.token)).toBe(200);
    expect(await keyStatuses(t, mate.keys)).toEqual(WORKING);
    // Signing in again works, and keys created from now on work.
    const again = await signIn(owner.email);
    expect(await meStatus(again.token)).toBe(200);
    expect(await keyStatuses(t, await keysOf(t, owner.orgId, owner.userId))).toEqual(WORKING);
  });
});

describe('change password', () => {
  it('needs the current password and changes nothing without it', async () => {
    const owner = await signUp(t);
    const err = await refusal(
      client(t, owner.token).accounts.changePassword.mutate({ currentPassword: 'wrong password', newPassword: 'a brand new password' }),
    );
    expect(err).toMatchObject({ status: 403, code: 'wrong_password' });
    expect(await meStatus(owner.token)).toBe(200);
    expect((await signIn(owner.email)).user.id).toBe(owner.userId);
  });

  it('ends all sessions and keys of the user, gives this device a fresh session, and spares colleagues', async () => {
    const owner = await signUp(t);
    const laptop = await signIn(owner.email);
    const keys = await keysOf(t, owner.orgId, owner.userId);
    const mate = await colleague(owner.orgId);
    const next = 'another long password';

    const fresh = await client(t, owner.token).accounts.changePassword.mutate({ currentPassword: PASSWORD, newPassword: next });
    expect(fresh.token).toMatch(/^lws_/);
    expect(await meStatus(fresh.token)).toBe(200);
    expect([await meStatus(owner.token), await meStatus(laptop.token)]).toEqual([401, 401]);
    expect(await keyStatuses(t, keys)).toEqual(DEAD);
    expect(await refusal(signIn(owner.email))).toMatchObject({ status: 401, code: 'invalid_credentials' });
    expect((await signIn(owner.email, next)).user.id).toBe(owner.userId);

    expect(await meStatus(mate.token)).toBe(200);
    expect(await keyStatuses(t, mate.keys)).toEqual(WORKING);
  });

  it('works over REST', async () => {
    const owner = await signUp(t);
    const r = await rest(t, 'POST', '/accounts/change-password', {
      token: owner.token,
      body: { currentPassword: PASSWORD, newPassword: 'yet another password' },
    });
    expect(r).toMatchObject({ status: 200, body: { token: expect.stringMatching(/^lws_/) } });
    expect(await meStatus(owner.token)).toBe(401);
  });
});

describe('security confirmation for API key creation', () => {
  it('unlocks key creation for 5 minutes on the confirming session only', async () => {
    const owner = await signUp(t);
    const other = await signIn(owner.email);
    const actor = await sessionActor(t, owner.token);
    const unlocked = () => assertKeyCreationUnlocked(t.runtime.deps.db, actor, t.clock.now());
    await expect(unlocked()).rejects.toMatchObject({ status: 403, code: 'confirmation_required' });

    t.clock.freeze();
    const { keyCreationUnlockedUntil } = await client(t, owner.token).accounts.confirmPassword.mutate({ password: PASSWORD });
    expect(keyCreationUnlockedUntil).toBe(new Date(t.clock.now().getTime() + 5 * 60_000).toISOString());
    await expect(unlocked()).resolves.toBeUndefined();
    const otherActor = await sessionActor(t, other.token);
    await expect(assertKeyCreationUnlocked(t.runtime.deps.db, otherActor, t.clock.now())).rejects.toMatchObject({
      code: 'confirmation_required',
    });

    t.clock.advance(5 * 60_000 - 1);
    await expect(unlocked()).resolves.toBeUndefined();
    expect((await rest(t, 'POST', '/api-keys', { token: owner.token, body: { name: 'in time', type: 'internal' } })).status).toBe(201);
    t.clock.advance(1);
    await expect(unlocked()).rejects.toMatchObject({ status: 403, code: 'confirmation_required' });
    expect(await rest(t, 'POST', '/api-keys', { token: owner.token, body: { name: 'too late', type: 'internal' } })).toMatchObject({
      status: 403,
      body: { code: 'confirmation_required' },
    });
  });

  it('refuses a wrong password, and an Internal key, which cannot confirm nor create keys', async () => {
    const owner = await signUp(t);
    const err = await refusal(client(t, owner.token).accounts.confirmPassword.mutate({ password: 'not it at all' }));
    expect(err).toMatchObject({ status: 403, code: 'wrong_password' });
    expect(await t.sql('select key_creation_unlocked_until from sessions where token_hash = ?', [sha256(owner.token)])).toEqual([
      { key_creation_unlocked_until: null },
    ]);

    const { internalKey } = await keysOf(t, owner.orgId, owner.userId);
    const r = await rest(t, 'POST', '/accounts/confirm-password', { token: internalKey, body: { password: PASSWORD } });
    expect(r).toMatchObject({ status: 403, body: { code: 'session_required' } });
    const keyActor = { ...(await sessionActor(t, owner.token)), via: 'internal_key' as const, sessionId: null, apiKeyId: 'k' };
    await expect(assertKeyCreationUnlocked(t.runtime.deps.db, keyActor, t.clock.now())).rejects.toMatchObject({
      status: 403,
      code: 'confirmation_required',
    });
  });

  it('confirms over REST', async () => {
    const owner = await signUp(t);
    const r = await rest(t, 'POST', '/accounts/confirm-password', { token: owner.token, body: { password: PASSWORD } });
    expect(r).toMatchObject({ status: 200, body: { keyCreationUnlockedUntil: expect.any(String) } });
    await expect(assertKeyCreationUnlocked(t.runtime.deps.db, await sessionActor(t, owner.token), t.clock.now())).resolves.toBeUndefined();
  });
});

describe('the contract', () => {
  it('documents every accounts operation, the public ones without a bearer requirement', async () => {
    const doc = (await rest(t, 'GET', '/docs/json')).body;
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/accounts/'));
    expect(paths.sort()).toEqual(
      [
        '/accounts/change-password',
        '/accounts/confirm-password',
        '/accounts/invites',
        '/accounts/invites/accept',
        '/accounts/log-out-all',
        '/accounts/members',
        '/accounts/members/{userId}/deactivate',
        '/accounts/members/{userId}/reactivate',
        '/accounts/members/{userId}/role',
        '/accounts/password-reset/complete',
        '/accounts/password-reset/request',
        '/accounts/sign-in',
        '/accounts/sign-out',
        '/accounts/sign-up',
      ].sort(),
    );
    const security = (path: string) => doc.paths[path].post.security ?? doc.security ?? [];
    expect(security('/accounts/sign-in')).toEqual([]);
    expect(security('/accounts/log-out-all')).not.toEqual([]);
  });
});
