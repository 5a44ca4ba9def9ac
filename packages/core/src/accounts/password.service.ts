import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { generateToken, hashKey } from '../auth/key-material.ts';
import type { Jobs } from '../jobs/queue.ts';
import { queueMail } from '../mail/send-job.ts';
import { passwordResetEmail, type Postbox } from './emails.ts';
import { spendAddressBudget } from './address-limits.ts';
import { accountErrors } from './errors.ts';
import { hashPassword } from './passwords.ts';
import type { SessionView } from './schemas.ts';
import { endAllCredentials, openSession, USER_COLUMNS, type UserRow } from './sessions.service.ts';
import { checkPassword, type Client } from './sign-in.ts';
import { clearAccountLock } from './throttle.ts';

/** One hour: long enough to reach the inbox, short enough that an old email in a mailbox is worth nothing. */
export const RESET_TTL_MINUTES = 60;
/** Reset emails per user per hour: a cap so the form cannot be used to flood someone's inbox. */
const RESETS_PER_HOUR = 5;
export const RESET_PREFIX = 'lwr_';

export async function currentUser(db: Db, actor: InternalActor): Promise<UserRow> {
  const [user] = await db.execute<UserRow[]>(`select ${USER_COLUMNS} from users where id = ? and organization_id = ?`, [actor.userId, actor.orgId]);
  if (!user) throw accountErrors.userNotFound(actor.userId);
  return user;
}

/**
 * Sets a new password and ends everything issued under the old one: sessions, API keys the user created (credential
 * epoch) and reset links still outstanding.
 */
async function setPassword(tx: Db, userId: string, passwordHash: string, now: Date): Promise<UserRow> {
  await tx.execute('update users set password_hash = ? where id = ?', [passwordHash, userId]);
  await tx.execute('update password_reset_tokens set used_at = ? where user_id = ? and used_at is null', [now, userId]);
  return endAllCredentials(tx, userId, now);
}

/** Needs the current password; every other session and key of the user ends, and this device gets a fresh session. */
export async function changePassword(
  db: Db,
  actor: InternalActor,
  input: { currentPassword: string; newPassword: string },
  client: Client,
): Promise<SessionView> {
  const me = await currentUser(db, actor);
  if (!(await checkPassword(db, me.email, input.currentPassword, client))) throw accountErrors.wrongPassword();
  const passwordHash = await hashPassword(input.newPassword);
  return db.transaction(async (tx) => openSession(tx, await setPassword(tx, me.id, passwordHash, client.now), client));
}

const ISSUE_RESET_TOKEN = `
insert into password_reset_tokens (user_id, token_hash, created_at, expires_at)
select u.id, ?, ?::timestamptz, ?::timestamptz + make_interval(mins => ?) from users u
where u.email = ? and u.active
  and (select count(*) from password_reset_tokens t where t.user_id = u.id and t.created_at > ?::timestamptz - interval '1 hour') < ?
returning user_id`;

export const RESET_REQUEST_QUEUE = 'accounts.password-reset';

/**
 * Answers before looking anything up: the request spends the address's hourly budget and queues an
 * `accounts.password-reset` job, the same work whether or not the email belongs to someone, so the reply is the same
 * in the same time. The job issues the token.
 */
export async function requestPasswordReset(db: Db, jobs: Jobs, email: string, client: Client, limits: { perHour: number }): Promise<void> {
  await spendAddressBudget(db, 'password-reset', client.ip, limits.perHour, client.now);
  await jobs.send(db, RESET_REQUEST_QUEUE, { email });
}

/**
 * Issues a token and queues its email in one transaction; only the email ever carries the token. Requests for one
 * email are serialized so the hourly cap holds under bursts.
 */
export async function issueResetToken(db: Db, postbox: Postbox, email: string, now: Date): Promise<void> {
  const token = generateToken(RESET_PREFIX);
  await db.transaction(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`reset:${email}`]);
    const rows = await tx.execute<{ user_id: string }[]>(ISSUE_RESET_TOKEN, [hashKey(token), now, now, RESET_TTL_MINUTES, email, now, RESETS_PER_HOUR]);
    if (rows.length) await queueMail(tx, postbox.jobs, passwordResetEmail(postbox.appUrl, email, token));
  });
}

const USE_RESET_TOKEN = `
update password_reset_tokens t set used_at = ?::timestamptz
from users u
where t.token_hash = ? and t.used_at is null and t.expires_at > ?::timestamptz and u.id = t.user_id and u.active
returning u.id, u.email`;

/** Spends a reset token (once, within its hour) on a new password; ends all sessions and keys of the user. */
export async function resetPassword(db: Db, input: { token: string; newPassword: string }, client: Client): Promise<void> {
  const passwordHash = await hashPassword(input.newPassword);
  await db.transaction(async (tx) => {
    const [used] = await tx.execute<{ id: string; email: string }[]>(USE_RESET_TOKEN, [client.now, hashKey(input.token), client.now]);
    if (!used) throw accountErrors.invalidToken('reset');
    await setPassword(tx, used.id, passwordHash, client.now);
    await clearAccountLock(tx, used.email, client.ip, client.now);
  });
}
