import { qb, sql, statement, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { generateToken, hashKey } from '../auth/key-material.ts';
import { queueMail } from '../mail/send-job.ts';
import { inviteEmail, type Postbox } from './emails.ts';
import { accountErrors } from './errors.ts';
import { hashPassword } from './passwords.ts';
import type { AcceptInviteInput, InviteInput, InviteView, PendingInviteView, SessionView } from './schemas.ts';
import { openSession, USER_FIELDS } from './sessions.service.ts';
import type { Client } from './sign-in.ts';

/** A week: invitations sit in inboxes over weekends and holidays. */
export const INVITE_TTL_DAYS = 7;
export const INVITE_PREFIX = 'lwi_';

const EMAIL_TAKEN = statement<{ email: string }>()((p) =>
  qb.selectFrom('users').select(sql.lit(1).as('taken')).where('email', '=', p.email),
);

const DROP_PENDING = statement<{ orgId: string; email: string }>()((p) =>
  qb.deleteFrom('invites').where('organization_id', '=', p.orgId).where('email', '=', p.email).where('accepted_at', 'is', null),
);

const ISSUE_INVITE = statement<{
  orgId: string;
  invitedBy: string;
  email: string;
  role: InviteInput['role'];
  tokenHash: string;
  now: Date;
}>()((p) =>
  qb
    .insertInto('invites')
    .values({
      organization_id: p.orgId,
      invited_by_id: p.invitedBy,
      email: p.email,
      role: p.role,
      token_hash: p.tokenHash,
      created_at: sql<Date>`${p.now}::timestamptz`,
      expires_at: sql<Date>`${p.now}::timestamptz + make_interval(days => ${INVITE_TTL_DAYS})`,
    })
    .returning((eb) => [
      'id',
      'email',
      'role',
      'expires_at',
      eb
        .selectFrom('organizations')
        .select('organizations.name')
        .whereRef('organizations.id', '=', 'invites.organization_id')
        .$asScalar()
        .as('org_name'),
    ]),
);

/**
 * Owners and admins invite by email as admin or member; the token goes to the email only, queued in the transaction
 * that stores its hash. Inviting the same address again replaces the pending invitation, which is how one is re-sent.
 */
export async function invite(db: Db, actor: InternalActor, input: InviteInput, postbox: Postbox, now: Date): Promise<InviteView> {
  requireRole(actor, 'owner', 'admin');
  // Emails are unique across organizations: someone already signed up could never accept.
  if ((await db.run(EMAIL_TAKEN, { email: input.email })).length) throw accountErrors.emailTaken(input.email);
  const token = generateToken(INVITE_PREFIX);
  const row = await db.transaction(async (tx) => {
    await tx.run(DROP_PENDING, { orgId: actor.orgId, email: input.email });
    const [r] = await tx.run(ISSUE_INVITE, {
      orgId: actor.orgId,
      invitedBy: actor.userId,
      email: input.email,
      role: input.role,
      tokenHash: hashKey(token),
      now,
    });
    await queueMail(tx, postbox.jobs, inviteEmail(postbox.appUrl, r!.email, r!.org_name, r!.role, token));
    return r!;
  });
  return { id: row.id, email: row.email, role: row.role, expiresAt: new Date(row.expires_at).toISOString() };
}

/**
 * Spends the invitation once, within its week, while whoever sent it is still an active owner or admin of the
 * organization: a deactivated admin's invitations die with their access.
 */
const USE_INVITE = statement<{ now: Date; tokenHash: string }>()((p) =>
  qb
    .updateTable('invites as i')
    .from('users as inviter')
    .set({ accepted_at: sql<Date>`${p.now}::timestamptz` })
    .where('i.token_hash', '=', p.tokenHash)
    .where('i.accepted_at', 'is', null)
    .where('i.expires_at', '>', sql<Date>`${p.now}::timestamptz`)
    .whereRef('inviter.id', '=', 'i.invited_by_id')
    .whereRef('inviter.organization_id', '=', 'i.organization_id')
    .where((eb) => eb.ref('inviter.active'))
    .where('inviter.role', 'in', [sql.lit('owner' as const), sql.lit('admin' as const)])
    .returning(['i.organization_id', 'i.email', 'i.role']),
);

const INSERT_USER = statement<{ orgId: string; email: string; name: string | null; passwordHash: string; role: 'admin' | 'member' }>()(
  (p) =>
    qb
      .insertInto('users')
      .values({ organization_id: p.orgId, email: p.email, name: p.name, password_hash: p.passwordHash, role: p.role })
      .onConflict((oc) => oc.column('email').doNothing())
      .returning(USER_FIELDS),
);

/** The invitee chooses a password and joins the organization with the invited role, signed in at once. */
export async function acceptInvite(db: Db, input: AcceptInviteInput, client: Client): Promise<SessionView> {
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const [inv] = await tx.run(USE_INVITE, { now: client.now, tokenHash: hashKey(input.token) });
    if (!inv) throw accountErrors.invalidToken('invite');
    const [user] = await tx.run(INSERT_USER, {
      orgId: inv.organization_id,
      email: inv.email,
      name: input.name ?? null,
      passwordHash,
      role: inv.role,
    });
    // Signed up elsewhere since the invitation: the transaction rolls back and the invitation stays unused.
    if (!user) throw accountErrors.emailTaken(inv.email);
    return openSession(tx, user, client);
  });
}

/** The invitations that can still be accepted: unused, within their week, from a sender who still has the access. */
const PENDING = statement<{ orgId: string; now: Date }>()((p) =>
  qb
    .selectFrom('invites as i')
    .innerJoin('users as inviter', 'inviter.id', 'i.invited_by_id')
    .select(['i.id', 'i.email', 'i.role', 'i.created_at', 'i.expires_at', 'inviter.id as inviter_id', 'inviter.email as inviter_email'])
    .where('i.organization_id', '=', p.orgId)
    .where('i.accepted_at', 'is', null)
    .where('i.expires_at', '>', sql<Date>`${p.now}::timestamptz`)
    .whereRef('inviter.organization_id', '=', 'i.organization_id')
    .where((eb) => eb.ref('inviter.active'))
    .where('inviter.role', 'in', [sql.lit('owner' as const), sql.lit('admin' as const)])
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id'),
);

/** Owners and admins, who send invitations, see the ones still pending (the Members screen), most recently sent first. */
export async function pendingInvites(db: Db, actor: InternalActor, now: Date): Promise<PendingInviteView[]> {
  requireRole(actor, 'owner', 'admin');
  const rows = await db.run(PENDING, { orgId: actor.orgId, now });
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    role: r.role,
    createdAt: new Date(r.created_at).toISOString(),
    expiresAt: new Date(r.expires_at).toISOString(),
    invitedBy: { id: r.inviter_id, email: r.inviter_email },
  }));
}
