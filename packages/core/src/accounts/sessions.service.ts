import { qb, sql, statement, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { generateToken, hashKey } from '../auth/key-material.ts';
import { SESSION_PREFIX } from '../auth/sessions.ts';
import { accountErrors } from './errors.ts';
import type { SessionView } from './schemas.ts';

/**
 * Sessions last 30 days from sign-in, absolute rather than sliding: a stolen token dies on a known date whatever its
 * use, and a month spares people signing in more often than a typical CRM user expects. Ending them early is what the
 * credential epoch is for.
 */
export const SESSION_TTL_DAYS = 30;

/** The user as accounts read it (a selection every user statement shares, each name checked against the entity). */
export const USER_FIELDS = ['id', 'organization_id', 'email', 'name', 'role', 'active', 'credential_epoch', 'password_hash'] as const;

const INSERT_SESSION = statement<{
  orgId: string;
  userId: string;
  tokenHash: string;
  epoch: number;
  now: Date;
  userAgent: string | null;
}>()((p) =>
  qb
    .insertInto('sessions')
    .values({
      organization_id: p.orgId,
      user_id: p.userId,
      token_hash: p.tokenHash,
      user_epoch: p.epoch,
      created_at: sql<Date>`${p.now}::timestamptz`,
      expires_at: sql<Date>`${p.now}::timestamptz + make_interval(days => ${SESSION_TTL_DAYS})`,
      user_agent: p.userAgent,
    })
    .returning('expires_at'),
);

/**
 * Opens a session for `user` under its current credential epoch, from `client.now`; the token exists only in the answer.
 * `client` is the part of sign-in's Client a session records (typed here, so sign-in.ts can import this module).
 */
export async function openSession(
  db: Db,
  user: Omit<UserRow, 'password_hash' | 'active'>,
  client: { userAgent?: string | undefined; now: Date },
): Promise<SessionView> {
  const token = generateToken(SESSION_PREFIX);
  const [row] = await db.run(INSERT_SESSION, {
    orgId: user.organization_id,
    userId: user.id,
    tokenHash: hashKey(token),
    epoch: user.credential_epoch,
    now: client.now,
    userAgent: client.userAgent?.slice(0, 300) ?? null,
  });
  return {
    token,
    expiresAt: new Date(row!.expires_at).toISOString(),
    user: { id: user.id, orgId: user.organization_id, email: user.email, name: user.name, role: user.role },
  };
}

const BUMP_EPOCH = statement<{ now: Date; id: string }>()((p) =>
  qb
    .updateTable('users')
    .set((eb) => ({ credential_epoch: eb(eb.ref('credential_epoch'), '+', sql.lit(1)), updated_at: p.now }))
    .where('id', '=', p.id)
    .returning(USER_FIELDS),
);

/** A user as accounts read it, password hash included. */
export type UserRow = NonNullable<(typeof BUMP_EPOCH)['row']>;

const END_SESSIONS = statement<{ userId: string }>()((p) => qb.deleteFrom('sessions').where('user_id', '=', p.userId));
const END_SESSION = statement<{ id: string }>()((p) => qb.deleteFrom('sessions').where('id', '=', p.id));

/**
 * Moves the user's credential epoch: every session and every API key the user created stops working on its next
 * request, in every process, because both are only valid under the epoch they were issued with. The session rows are
 * deleted as well, for tidiness only. Run it inside the transaction that makes the change needing it.
 */
export async function endAllCredentials(tx: Db, userId: string, now: Date): Promise<UserRow> {
  const [user] = await tx.run(BUMP_EPOCH, { now, id: userId });
  if (!user) throw accountErrors.userNotFound(userId);
  await tx.run(END_SESSIONS, { userId });
  return user;
}

/** Ends the session the request came with. */
export async function signOut(db: Db, actor: InternalActor): Promise<void> {
  if (actor.via !== 'session' || !actor.sessionId) throw accountErrors.sessionRequired('Signing out');
  await db.run(END_SESSION, { id: actor.sessionId });
}

/** "Log out of all devices": ends every session of the user and stops every API key the user created, at once. */
export async function logOutAll(db: Db, actor: InternalActor, now: Date): Promise<void> {
  await db.transaction((tx) => endAllCredentials(tx, actor.userId, now));
}
