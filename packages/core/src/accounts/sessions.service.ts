import type { Db, Role } from '@leadwire/db';
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

export interface UserRow {
  id: string;
  organization_id: string;
  email: string;
  name: string | null;
  role: Role;
  active: boolean;
  credential_epoch: number;
  password_hash: string;
}

export const USER_COLUMNS = 'id, organization_id, email, name, role, active, credential_epoch, password_hash';

const INSERT_SESSION = `
insert into sessions (organization_id, user_id, token_hash, user_epoch, created_at, expires_at, user_agent)
values (?, ?, ?, ?, ?::timestamptz, ?::timestamptz + make_interval(days => ?), ?)
returning expires_at`;

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
  const [row] = await db.execute<{ expires_at: Date }[]>(INSERT_SESSION, [
    user.organization_id,
    user.id,
    hashKey(token),
    user.credential_epoch,
    client.now,
    client.now,
    SESSION_TTL_DAYS,
    client.userAgent?.slice(0, 300) ?? null,
  ]);
  return {
    token,
    expiresAt: new Date(row!.expires_at).toISOString(),
    user: { id: user.id, orgId: user.organization_id, email: user.email, name: user.name, role: user.role },
  };
}

const BUMP_EPOCH = `
update users set credential_epoch = credential_epoch + 1, updated_at = ?
where id = ?
returning ${USER_COLUMNS}`;

/**
 * Moves the user's credential epoch: every session and every API key the user created stops working on its next
 * request, in every process, because both are only valid under the epoch they were issued with. The session rows are
 * deleted as well, for tidiness only. Run it inside the transaction that makes the change needing it.
 */
export async function endAllCredentials(tx: Db, userId: string, now: Date): Promise<UserRow> {
  const [user] = await tx.execute<UserRow[]>(BUMP_EPOCH, [now, userId]);
  if (!user) throw accountErrors.userNotFound(userId);
  await tx.execute('delete from sessions where user_id = ?', [userId]);
  return user;
}

/** Ends the session the request came with. */
export async function signOut(db: Db, actor: InternalActor): Promise<void> {
  if (actor.via !== 'session' || !actor.sessionId) throw accountErrors.sessionRequired('Signing out');
  await db.execute('delete from sessions where id = ?', [actor.sessionId]);
}

/** "Log out of all devices": ends every session of the user and stops every API key the user created, at once. */
export async function logOutAll(db: Db, actor: InternalActor, now: Date): Promise<void> {
  await db.transaction((tx) => endAllCredentials(tx, actor.userId, now));
}
