import { qb, sql, statement, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { generateToken, hashKey } from '../auth/key-material.ts';
import { z } from 'zod';
import { type Jobs, jobQueue } from '../jobs/queue.ts';
import { queueMail } from '../mail/send-job.ts';
import { passwordResetEmail, type Postbox } from './emails.ts';
import { type AddressLimit, spendAddressBudget } from './address-limits.ts';
import { accountErrors } from './errors.ts';
import { hashPassword } from './passwords.ts';
import type { SessionView } from './schemas.ts';
import { endAllCredentials, openSession, USER_FIELDS, type UserRow } from './sessions.service.ts';
import { checkPassword, type Client } from './sign-in.ts';
import { clearAccountLock } from './throttle.ts';

/** One hour: long enough to reach the inbox, short enough that an old email in a mailbox is worth nothing. */
export const RESET_TTL_MINUTES = 60;
/** Reset emails per user per hour: a cap so the form cannot be used to flood someone's inbox. */
const RESETS_PER_HOUR = 5;
export const RESET_PREFIX = 'lwr_';

const USER_IN_ORG = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('users').select(USER_FIELDS).where('id', '=', p.id).where('organization_id', '=', p.orgId),
);

const SET_PASSWORD_HASH = statement<{ hash: string; id: string }>()((p) =>
  qb.updateTable('users').set({ password_hash: p.hash }).where('id', '=', p.id),
);

const SPEND_RESET_TOKENS = statement<{ now: Date; userId: string }>()((p) =>
  qb.updateTable('password_reset_tokens').set({ used_at: p.now }).where('user_id', '=', p.userId).where('used_at', 'is', null),
);

export async function currentUser(db: Db, actor: InternalActor): Promise<UserRow> {
  const [user] = await db.run(USER_IN_ORG, { id: actor.userId, orgId: actor.orgId });
  if (!user) throw accountErrors.userNotFound(actor.userId);
  return user;
}

/**
 * Sets a new password and ends everything issued under the old one: sessions, API keys the user created (credential
 * epoch) and reset links still outstanding.
 */
async function setPassword(tx: Db, userId: string, passwordHash: string, now: Date): Promise<UserRow> {
  await tx.run(SET_PASSWORD_HASH, { hash: passwordHash, id: userId });
  await tx.run(SPEND_RESET_TOKENS, { now, userId });
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

/** Serializes the requests for one email (a transaction-scoped lock, gone at commit). */
const LOCK_EMAIL = statement<{ key: string }>()((p) => qb.selectNoFrom(sql<void>`pg_advisory_xact_lock(hashtext(${p.key}))`.as('locked')));

const ISSUE_RESET_TOKEN = statement<{ tokenHash: string; now: Date; email: string }>()((p) =>
  qb
    .insertInto('password_reset_tokens')
    .columns(['user_id', 'token_hash', 'created_at', 'expires_at'])
    .expression(
      qb
        .selectFrom('users as u')
        .select((eb) => [
          'u.id as user_id',
          eb.val(p.tokenHash).as('token_hash'),
          sql<Date>`${p.now}::timestamptz`.as('created_at'),
          sql<Date>`${p.now}::timestamptz + make_interval(mins => ${RESET_TTL_MINUTES})`.as('expires_at'),
        ])
        .where('u.email', '=', p.email)
        .where((eb) => eb.ref('u.active'))
        .where((eb) =>
          eb(
            eb
              .selectFrom('password_reset_tokens as t')
              .select((eb) => eb.fn.countAll().as('n'))
              .whereRef('t.user_id', '=', 'u.id')
              .where('t.created_at', '>', sql<Date>`${p.now}::timestamptz - interval '1 hour'`),
            '<',
            RESETS_PER_HOUR,
          ),
        ),
    )
    .returning('user_id'),
);

export const RESET_REQUEST_QUEUE = 'accounts.password-reset';
export const ResetRequestPayload = z.object({ email: z.string().max(254) });
export type ResetRequestPayload = z.infer<typeof ResetRequestPayload>;
/** Sent here, handled by reset-job.ts (which needs this module's issueResetToken). */
export const resetRequestQueue = jobQueue(RESET_REQUEST_QUEUE, ResetRequestPayload);

/**
 * Answers before looking anything up: the request spends the address's hourly budget and queues an
 * `accounts.password-reset` job, the same work whether or not the email belongs to someone, so the reply is the same
 * in the same time. The job issues the token.
 */
export async function requestPasswordReset(db: Db, jobs: Jobs, email: string, client: Client, limit: AddressLimit): Promise<void> {
  await spendAddressBudget(db, 'password-reset', client.ip, limit, client.now);
  await resetRequestQueue.send(jobs, db, { email });
}

/**
 * Issues a token and queues its email in one transaction; only the email ever carries the token. Requests for one
 * email are serialized so the hourly cap holds under bursts.
 */
export async function issueResetToken(db: Db, postbox: Postbox, email: string, now: Date): Promise<void> {
  const token = generateToken(RESET_PREFIX);
  await db.transaction(async (tx) => {
    await tx.run(LOCK_EMAIL, { key: `reset:${email}` });
    const rows = await tx.run(ISSUE_RESET_TOKEN, { tokenHash: hashKey(token), now, email });
    if (rows.length) await queueMail(tx, postbox.jobs, passwordResetEmail(postbox.appUrl, email, token));
  });
}

const USE_RESET_TOKEN = statement<{ now: Date; tokenHash: string }>()((p) =>
  qb
    .updateTable('password_reset_tokens as t')
    .from('users as u')
    .set({ used_at: sql<Date>`${p.now}::timestamptz` })
    .where('t.token_hash', '=', p.tokenHash)
    .where('t.used_at', 'is', null)
    .where('t.expires_at', '>', sql<Date>`${p.now}::timestamptz`)
    .whereRef('u.id', '=', 't.user_id')
    .where((eb) => eb.ref('u.active'))
    .returning(['u.id', 'u.email']),
);

/** Spends a reset token (once, within its hour) on a new password; ends all sessions and keys of the user. */
export async function resetPassword(db: Db, input: { token: string; newPassword: string }, client: Client): Promise<void> {
  const passwordHash = await hashPassword(input.newPassword);
  await db.transaction(async (tx) => {
    const [used] = await tx.run(USE_RESET_TOKEN, { now: client.now, tokenHash: hashKey(input.token) });
    if (!used) throw accountErrors.invalidToken('reset');
    await setPassword(tx, used.id, passwordHash, client.now);
    await clearAccountLock(tx, used.email, client.ip, client.now);
  });
}
