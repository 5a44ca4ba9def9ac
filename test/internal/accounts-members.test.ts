import { hashPassword } from '#core/accounts/passwords.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import {
  client,
  DEAD,
  type Inbox,
  inbox,
  keyStatuses,
  keysOf,
  PASSWORD,
  refusal,
  rest,
  sha256,
  signUp,
  tokenOf,
  uniqueEmail,
  WORKING,
} from './accounts-support.ts';

let t: TestApp;
let mail: Inbox;
let hash: string;
beforeAll(async () => {
  t = await initTestApp();
  mail = await inbox(t);
  hash = await hashPassword(PASSWORD);
});
afterAll(async () => {
  await t?.close();
  await mail?.close();
});

const DAY_MS = 86_400_000;
const meStatus = async (token: string) => (await rest(t, 'GET', '/me', { token })).status;

/** A user of `orgId` with `role`, signed in (inserted directly: the invitation flow has its own tests). */
async function member(orgId: string, role: 'owner' | 'admin' | 'member') {
  const email = uniqueEmail(role);
  const [u] = await t.sql<{ id: string }>(
    'insert into users (organization_id, email, password_hash, role) values (?, ?, ?, ?) returning id',
    [orgId, email, hash, role],
  );
  const s = await client(t).accounts.signIn.mutate({ email, password: PASSWORD });
  return { userId: u!.id, email, token: s.token };
}

describe('invitations', () => {
  it('owner invites, the invitee accepts with a password and is signed in to that organization with that role', async () => {
    const owner = await signUp(t);
    const email = uniqueEmail('invitee');
    const inv = await client(t, owner.token).accounts.invite.mutate({ email: email.toUpperCase(), role: 'admin' });
    expect(inv).toMatchObject({ email, role: 'admin' });
    const message = await mail.next(email);
    expect(message).toMatchObject({ template: 'invite' });
    const token = tokenOf(message.link);
    expect(token).toMatch(/^lwi_[0-9A-Za-z]{43}$/);
    const [row] = await t.sql<any>('select * from invites where id = ?', [inv.id]);
    expect(row).toMatchObject({ organization_id: owner.orgId, token_hash: sha256(token), accepted_at: null });
    expect(JSON.stringify(row)).not.toContain(token.slice(4));

    const r = await rest(t, 'POST', '/accounts/invites/accept', { body: { token, password: 'my own password', name: 'Grace' } });
    expect(r).toMatchObject({ status: 200, body: { user: { email, role: 'admin', orgId: owner.orgId, name: 'Grace' } } });
    expect(await client(t, r.body.token).me.query()).toMatchObject({ orgId: owner.orgId, role: 'admin', via: 'session' });
    const { members } = await client(t, owner.token).accounts.members.query();
    expect(members.map((m) => [m.email, m.role, m.active])).toEqual([
      [owner.email, 'owner', true],
      [email, 'admin', true],
    ]);

    expect(await refusal(client(t).accounts.acceptInvite.mutate({ token, password: 'another password' }))).toMatchObject({
      status: 400,
      code: 'invalid_token',
    });
  });

  it('over REST with 201; admins invite too; members may not', async () => {
    const owner = await signUp(t);
    const admin = await member(owner.orgId, 'admin');
    const plain = await member(owner.orgId, 'member');
    const r = await rest(t, 'POST', '/accounts/invites', { token: admin.token, body: { email: uniqueEmail(), role: 'member' } });
    expect(r).toMatchObject({ status: 201, body: { role: 'member' } });
    const before = await t.sql('select count(*)::int as n from invites');
    expect(await refusal(client(t, plain.token).accounts.invite.mutate({ email: uniqueEmail(), role: 'member' }))).toMatchObject({
      status: 403,
      code: 'forbidden_role',
    });
    expect(await t.sql('select count(*)::int as n from invites')).toEqual(before);
  });

  it('refuses an email that already has an account, and the role owner', async () => {
    const owner = await signUp(t);
    const other = await signUp(t);
    expect(await refusal(client(t, owner.token).accounts.invite.mutate({ email: other.email, role: 'member' }))).toMatchObject({
      status: 409,
      code: 'email_taken',
    });
    const r = await rest(t, 'POST', '/accounts/invites', { token: owner.token, body: { email: uniqueEmail(), role: 'owner' } });
    expect(r).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
  });

  it('expires 7 days after it was sent; inviting again replaces the pending invitation', async () => {
    const owner = await signUp(t);
    const [email, punctual] = [uniqueEmail(), uniqueEmail('punctual')];
    try {
      t.clock.freeze();
      const inv = await client(t, owner.token).accounts.invite.mutate({ email, role: 'member' });
      expect(inv.expiresAt).toBe(new Date(t.clock.now().getTime() + 7 * DAY_MS).toISOString());
      const first = tokenOf((await mail.next(email)).link);
      await client(t, owner.token).accounts.invite.mutate({ email, role: 'admin' });
      const second = tokenOf((await mail.next(email)).link);
      expect(await refusal(client(t).accounts.acceptInvite.mutate({ token: first, password: PASSWORD }))).toMatchObject({
        code: 'invalid_token',
      });
      await client(t, owner.token).accounts.invite.mutate({ email: punctual, role: 'member' });
      const onTime = tokenOf((await mail.next(punctual)).link);

      t.clock.advance(7 * DAY_MS - 1);
      expect((await client(t).accounts.acceptInvite.mutate({ token: onTime, password: PASSWORD })).user).toMatchObject({ email: punctual });
      t.clock.advance(1);
      expect(await refusal(client(t).accounts.acceptInvite.mutate({ token: second, password: PASSWORD }))).toMatchObject({
        code: 'invalid_token',
      });
      expect(await t.sql('select 1 from users where email = ?', [email])).toEqual([]);
    } finally {
      t.clock.unfreeze();
      t.clock.set(new Date());
    }
  });

  it('lists the pending invitations to owners and admins: not accepted, not expired, not from a deactivated sender', async () => {
    const owner = await signUp(t);
    const admin = await member(owner.orgId, 'admin');
    const plain = await member(owner.orgId, 'member');
    const [waiting, accepted, orphaned, late] = [
      uniqueEmail('waiting'),
      uniqueEmail('accepted'),
      uniqueEmail('orphan'),
      uniqueEmail('late'),
    ];
    const lateInv = await client(t, owner.token).accounts.invite.mutate({ email: late, role: 'member' });
    const inv = await client(t, owner.token).accounts.invite.mutate({ email: waiting, role: 'admin' });
    await client(t, owner.token).accounts.invite.mutate({ email: accepted, role: 'member' });
    await client(t).accounts.acceptInvite.mutate({ token: tokenOf((await mail.next(accepted)).link), password: PASSWORD });
    await client(t, admin.token).accounts.invite.mutate({ email: orphaned, role: 'member' });
    const listed = async (token: string) => (await client(t, token).accounts.invites.query()).invites.map((i) => i.email);
    expect(await listed(admin.token)).toEqual([orphaned, waiting, late]);

    // Its week is over by the server's clock (the expiry rule itself is tested above), and the admin loses access.
    await t.sql('update invites set expires_at = ? where id = ?', [t.clock.now(), lateInv.id]);
    await client(t, owner.token).accounts.deactivate.mutate({ userId: admin.userId });
    const [sent] = await t.sql<{ created_at: Date }>('select created_at from invites where id = ?', [inv.id]);
    expect((await client(t, owner.token).accounts.invites.query()).invites).toEqual([
      {
        id: inv.id,
        email: waiting,
        role: 'admin',
        createdAt: new Date(sent!.created_at).toISOString(),
        expiresAt: inv.expiresAt,
        invitedBy: { id: owner.userId, email: owner.email },
      },
    ]);
    expect(await refusal(client(t, plain.token).accounts.invites.query())).toMatchObject({ status: 403, code: 'forbidden_role' });
    const r = await rest(t, 'GET', '/accounts/invites', { token: owner.token });
    expect(r).toMatchObject({ status: 200, body: { invites: [{ email: waiting }] } });
    expect(await listed((await signUp(t)).token)).toEqual([]);
  });

  it('dies with its sender\u2019s access: an invitation from a since-deactivated admin is refused', async () => {
    const owner = await signUp(t);
    const admin = await member(owner.orgId, 'admin');
    const email = uniqueEmail();
    await client(t, admin.token).accounts.invite.mutate({ email, role: 'member' });
    const token = tokenOf((await mail.next(email)).link);
    await client(t, owner.token).accounts.deactivate.mutate({ userId: admin.userId });
    expect(await refusal(client(t).accounts.acceptInvite.mutate({ token, password: PASSWORD }))).toMatchObject({ code: 'invalid_token' });
  });
});

describe('roles', () => {
  it('only owners change roles; the change applies to the next request', async () => {
    const owner = await signUp(t);
    const admin = await member(owner.orgId, 'admin');
    const plain = await member(owner.orgId, 'member');
    expect(await refusal(client(t, admin.token).accounts.changeRole.mutate({ userId: plain.userId, role: 'admin' }))).toMatchObject({
      status: 403,
      code: 'forbidden_role',
    });
    expect(await client(t, plain.token).me.query()).toMatchObject({ role: 'member' });

    const r = await rest(t, 'POST', `/accounts/members/${plain.userId}/role`, { token: owner.token, body: { role: 'admin' } });
    expect(r).toMatchObject({ status: 200, body: { id: plain.userId, role: 'admin' } });
    expect(await client(t, plain.token).me.query()).toMatchObject({ role: 'admin' });
  });

  it('cannot demote the last owner, but can once there is another', async () => {
    const owner = await signUp(t);
    expect(await refusal(client(t, owner.token).accounts.changeRole.mutate({ userId: owner.userId, role: 'admin' }))).toMatchObject({
      status: 409,
      code: 'last_owner',
    });
    const second = await member(owner.orgId, 'admin');
    await client(t, owner.token).accounts.changeRole.mutate({ userId: second.userId, role: 'owner' });
    expect(await client(t, owner.token).accounts.changeRole.mutate({ userId: owner.userId, role: 'member' })).toMatchObject({
      role: 'member',
    });
    expect(await refusal(client(t, second.token).accounts.changeRole.mutate({ userId: second.userId, role: 'admin' }))).toMatchObject({
      code: 'last_owner',
    });
  });

  it('members list their organization, and only it', async () => {
    const a = await signUp(t);
    const b = await signUp(t);
    const plain = await member(a.orgId, 'member');
    const r = await rest(t, 'GET', '/accounts/members', { token: plain.token });
    expect(r.status).toBe(200);
    expect(r.body.members.map((m: any) => m.id).sort()).toEqual([a.userId, plain.userId].sort());
    expect(JSON.stringify(r.body)).not.toContain(b.userId);
    expect(JSON.stringify(r.body)).not.toMatch(/password|scrypt|epoch/i);
  });
});

describe('deactivation', () => {
  it('ends the user\u2019s sessions and keys at once, refuses sign-in, and spares everyone else', async () => {
    const owner = await signUp(t);
    const ownerKeys = await keysOf(t, owner.orgId, owner.userId);
    const plain = await member(owner.orgId, 'member');
    const plainKeys = await keysOf(t, owner.orgId, plain.userId);
    expect(await keyStatuses(t, plainKeys)).toEqual(WORKING);

    const r = await rest(t, 'POST', `/accounts/members/${plain.userId}/deactivate`, { token: owner.token, body: {} });
    expect(r).toMatchObject({ status: 200, body: { id: plain.userId, active: false } });
    expect(await meStatus(plain.token)).toBe(401);
    expect(await keyStatuses(t, plainKeys)).toEqual(DEAD);
    expect(await refusal(client(t).accounts.signIn.mutate({ email: plain.email, password: PASSWORD }))).toMatchObject({
      status: 403,
      code: 'user_deactivated',
    });
    expect(await meStatus(owner.token)).toBe(200);
    expect(await keyStatuses(t, ownerKeys)).toEqual(WORKING);

    // Reactivation lets the user sign in again; what deactivation ended stays ended.
    expect(await client(t, owner.token).accounts.reactivate.mutate({ userId: plain.userId })).toMatchObject({ active: true });
    const back = await client(t).accounts.signIn.mutate({ email: plain.email, password: PASSWORD });
    expect(await meStatus(back.token)).toBe(200);
    expect(await meStatus(plain.token)).toBe(401);
    expect(await keyStatuses(t, plainKeys)).toEqual(DEAD);
  });

  it('owners and admins only; never yourself; only an owner acts on an owner', async () => {
    const owner = await signUp(t);
    const admin = await member(owner.orgId, 'admin');
    const plain = await member(owner.orgId, 'member');
    const other = await member(owner.orgId, 'member');
    expect(await refusal(client(t, plain.token).accounts.deactivate.mutate({ userId: other.userId }))).toMatchObject({
      status: 403,
      code: 'forbidden_role',
    });
    expect(await refusal(client(t, owner.token).accounts.deactivate.mutate({ userId: owner.userId }))).toMatchObject({
      status: 409,
      code: 'cannot_deactivate_self',
    });
    expect(await refusal(client(t, admin.token).accounts.deactivate.mutate({ userId: admin.userId }))).toMatchObject({
      code: 'cannot_deactivate_self',
    });
    expect(await refusal(client(t, admin.token).accounts.deactivate.mutate({ userId: owner.userId }))).toMatchObject({
      status: 403,
      code: 'forbidden_role',
    });
    expect(await meStatus(owner.token)).toBe(200);

    expect(await client(t, admin.token).accounts.deactivate.mutate({ userId: other.userId })).toMatchObject({ active: false });
    expect(await refusal(client(t, plain.token).accounts.reactivate.mutate({ userId: other.userId }))).toMatchObject({
      code: 'forbidden_role',
    });
    expect(await client(t, admin.token).accounts.reactivate.mutate({ userId: other.userId })).toMatchObject({ active: true });
  });

  it('an Internal key acts with its creator\u2019s reach: an admin\u2019s key deactivates, a member\u2019s key may not', async () => {
    const owner = await signUp(t);
    const admin = await member(owner.orgId, 'admin');
    const plain = await member(owner.orgId, 'member');
    const plainKeys = await keysOf(t, owner.orgId, plain.userId);
    expect(await refusal(client(t, plainKeys.internalKey).accounts.deactivate.mutate({ userId: admin.userId }))).toMatchObject({
      code: 'forbidden_role',
    });
    const { internalKey } = await keysOf(t, owner.orgId, admin.userId);
    expect(await client(t, internalKey).accounts.deactivate.mutate({ userId: plain.userId })).toMatchObject({ active: false });
    expect(await keyStatuses(t, plainKeys)).toEqual(DEAD);
  });
});

describe('tenant isolation', () => {
  it('an admin of one organization cannot touch another: its users look not found, invitations land at home', async () => {
    const a = await signUp(t);
    const adminA = await member(a.orgId, 'admin');
    const b = await signUp(t);
    const userB = await member(b.orgId, 'member');
    const api = client(t, adminA.token);

    // Thunks, started one at a time: a call started early would reject before anything awaits it.
    for (const call of [
      () => api.accounts.deactivate.mutate({ userId: userB.userId }),
      () => api.accounts.reactivate.mutate({ userId: userB.userId }),
      () => client(t, a.token).accounts.changeRole.mutate({ userId: userB.userId, role: 'admin' }),
    ]) {
      expect(await refusal(call())).toMatchObject({ status: 404, code: 'not_found' });
    }
    const r = await rest(t, 'POST', `/accounts/members/${b.userId}/deactivate`, { token: adminA.token, body: {} });
    expect(r).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await meStatus(userB.token)).toBe(200);
    expect(await t.sql('select role, active from users where id = ?', [userB.userId])).toEqual([{ role: 'member', active: true }]);

    // No way to name another organization: the invitation is always into the inviter's own.
    const email = uniqueEmail();
    const inv = await rest(t, 'POST', '/accounts/invites', {
      token: adminA.token,
      body: { email, role: 'member', orgId: b.orgId, organizationId: b.orgId },
    });
    expect(inv.status).toBe(201);
    const s = await client(t).accounts.acceptInvite.mutate({ token: tokenOf((await mail.next(email)).link), password: PASSWORD });
    expect(s.user.orgId).toBe(a.orgId);
    expect((await client(t, b.token).accounts.members.query()).members.map((m) => m.email)).not.toContain(email);
  });
});
