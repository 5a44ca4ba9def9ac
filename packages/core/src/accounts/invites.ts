import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { generateToken, hashKey } from '../auth/key-material.ts';
import { queueMail } from '../mail/send-job.ts';
import { inviteEmail, type Postbox } from './emails.ts';
import { accountErrors } from './errors.ts';
import { hashPassword } from './passwords.ts';
import type { AcceptInviteInput, InviteInput, InviteView, SessionView } from './schemas.ts';
import { openSession, USER_COLUMNS, type UserRow } from './sessions.service.ts';
import type { Client } from './sign-in.ts';

/** A week: invitations sit in inboxes over weekends and holidays. */
export const INVITE_TTL_DAYS = 7;
export const INVITE_PREFIX = 'lwi_';

const ISSUE_INVITE = `
insert into invites (organization_id, invited_by_id, email, role, token_hash, created_at, expires_at)
values (?, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz + make_interval(days => ?))
returning id, email, role, expires_at, (select name from organizations where id = organization_id) as org_name`;

/**
 * Owners and admins invite by email as admin or member; the token goes to the email only, queued in the transaction
 * that stores its hash. Inviting the same address again replaces the pending invitation, which is how one is re-sent.
 */
export async function invite(db: Db, actor: InternalActor, input: InviteInput, postbox: Postbox, now: Date): Promise<InviteView> {
  requireRole(actor, 'owner', 'admin');
  // Emails are unique across organizations: someone already signed up could never accept.
  if ((await db.execute('select 1 from users where email = ?', [input.email])).length) throw accountErrors.emailTaken(input.email);
  const token = generateToken(INVITE_PREFIX);
  const row = await db.transaction(async (tx) => {
    await tx.execute('delete from invites where organization_id = ? and email = ? and accepted_at is null', [actor.orgId, input.email]);
    const [r] = await tx.execute<{ id: string; email: string; role: 'admin' | 'member'; expires_at: Date; org_name: string }[]>(
      ISSUE_INVITE,
      [actor.orgId, actor.userId, input.email, input.role, hashKey(token), now, now, INVITE_TTL_DAYS],
    );
    await queueMail(tx, postbox.jobs, inviteEmail(postbox.appUrl, r!.email, r!.org_name, r!.role, token));
    return r!;
  });
  return { id: row.id, email: row.email, role: row.role, expiresAt: new Date(row.expires_at).toISOString() };
}

/**
 * Spends the invitation once, within its week, while whoever sent it is still an active owner or admin of the
 * organization: a deactivated admin's invitations die with their access.
 */
const USE_INVITE = `
update invites i set accepted_at = ?::timestamptz
from users inviter
where i.token_hash = ? and i.accepted_at is null and i.expires_at > ?::timestamptz
  and inviter.id = i.invited_by_id and inviter.organization_id = i.organization_id
  and inviter.active and inviter.role in ('owner', 'admin')
returning i.organization_id, i.email, i.role`;

const INSERT_USER = `
insert into users (organization_id, email, name, password_hash, role)
values (?, ?, ?, ?, ?)
on conflict (email) do nothing
returning ${USER_COLUMNS}`;

/** The invitee chooses a password and joins the organization with the invited role, signed in at once. */
export async function acceptInvite(db: Db, input: AcceptInviteInput, client: Client): Promise<SessionView> {
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const [inv] = await tx.execute<{ organization_id: string; email: string; role: string }[]>(USE_INVITE, [client.now, hashKey(input.token), client.now]);
    if (!inv) throw accountErrors.invalidToken('invite');
    const [user] = await tx.execute<UserRow[]>(INSERT_USER, [inv.organization_id, inv.email, input.name ?? null, passwordHash, inv.role]);
    // Signed up elsewhere since the invitation: the transaction rolls back and the invitation stays unused.
    if (!user) throw accountErrors.emailTaken(inv.email);
    return openSession(tx, user, client);
  });
}
