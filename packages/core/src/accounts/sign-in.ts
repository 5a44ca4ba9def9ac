import { qb, statement, type Db } from '@leadwire/db';
import { type AddressLimit, spendAddressBudget } from './address-limits.ts';
import { accountErrors } from './errors.ts';
import { dummyPasswordHash, passwordHashSlots, verifyPassword } from './passwords.ts';
import type { SessionView, SignInInput, SignUpInput } from './schemas.ts';
import { createOrganization } from './service.ts';
import { openSession, USER_FIELDS, type UserRow } from './sessions.service.ts';
import { attemptSucceeded, beginAttempt } from './throttle.ts';

const SET_NAME = statement<{ name: string; id: string }>()((p) => qb.updateTable('users').set({ name: p.name }).where('id', '=', p.id));
const USER_BY_ID = statement<{ id: string }>()((p) => qb.selectFrom('users').select(USER_FIELDS).where('id', '=', p.id));
const USER_BY_EMAIL = statement<{ email: string }>()((p) => qb.selectFrom('users').select(USER_FIELDS).where('email', '=', p.email));

/**
 * Where and when a request comes from, as far as accounts care: the throttle's address, the session's device label,
 * the request's time (from `deps.clock`), which throttle windows, expiry and new sessions count from, and a wait on
 * that same clock for the throttle's slow-down.
 */
export interface Client {
  ip: string;
  userAgent?: string | undefined;
  now: Date;
  wait: (ms: number) => Promise<void>;
}

/**
 * A new organization with its owner, signed in. Every attempt spends the address's hourly sign-up budget first, taken
 * emails included (409 `email_taken` is the answer a careful product gives, but only `perHour` times an hour to an
 * address), and a taken email costs the same scrypt hash as a new one, so its answer comes no sooner.
 */
export async function signUp(db: Db, input: SignUpInput, client: Client, limit: AddressLimit): Promise<SessionView> {
  await spendAddressBudget(db, 'sign-up', client.ip, limit, client.now);
  const { userId } = await createOrganization(db, {
    name: input.organizationName,
    ownerEmail: input.email,
    ownerPassword: input.password,
  }).catch((err: unknown) => {
    // Two sign-ups racing for one email: the loser meets the unique index rather than the check before it.
    if ((err as { code?: unknown }).code === '23505') throw accountErrors.emailTaken(input.email);
    throw err;
  });
  if (input.name) await db.run(SET_NAME, { name: input.name, id: userId });
  const [user] = await db.run(USER_BY_ID, { id: userId });
  return openSession(db, user!, client);
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const [user] = await db.run(USER_BY_EMAIL, { email });
  return user;
}

/**
 * Checks a password for `email` under the brute-force throttle. Every path costs one scrypt: an unknown email is
 * checked against a dummy hash, so the answer takes as long as for a wrong password. Returns the user only when the
 * password is right; the caller decides what an inactive user may do.
 */
export async function checkPassword(db: Db, email: string, password: string, client: Client): Promise<UserRow | null> {
  // A flood that keeps the hashing queue full (a new address per attempt, through a trusted proxy) is refused before
  // the throttle's transaction and attempt row, which it would pay for only to be refused by the queue after them.
  passwordHashSlots().refuseIfFull();
  const attempt = await beginAttempt(db, email, client.ip, client.now, client.wait);
  const user = await findUserByEmail(db, email);
  const ok = await verifyPassword(password, user?.password_hash ?? dummyPasswordHash());
  if (!ok || !user) return null;
  await attemptSucceeded(db, attempt);
  return user;
}

/**
 * Email and password to a session. A deactivated user learns so only after giving the right password, so the answer
 * reveals nothing about an account to someone who does not hold its password.
 */
export async function signIn(db: Db, input: SignInInput, client: Client): Promise<SessionView> {
  const user = await checkPassword(db, input.email, input.password, client);
  if (!user) throw accountErrors.invalidCredentials();
  if (!user.active) throw accountErrors.userDeactivated();
  return openSession(db, user, client);
}
