import { qb, sql, statement, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { accountErrors } from './errors.ts';
import { currentUser } from './password.service.ts';
import { checkPassword, type Client } from './sign-in.ts';

/** How long a re-entered password unlocks API key creation on the session that entered it. */
export const CONFIRMATION_MINUTES = 5;

const UNLOCK = statement<{ now: Date; id: string }>()((p) =>
  qb
    .updateTable('sessions')
    .set({ key_creation_unlocked_until: sql<Date>`${p.now}::timestamptz + make_interval(mins => ${CONFIRMATION_MINUTES})` })
    .where('id', '=', p.id)
    .returning('key_creation_unlocked_until as until')
    // Just set from a non-null time: never null.
    .$narrowType<{ until: Date }>(),
);

const UNLOCKED = statement<{ id: string; userId: string; now: Date }>()((p) =>
  qb
    .selectFrom('sessions')
    .select(sql.lit(1).as('unlocked'))
    .where('id', '=', p.id)
    .where('user_id', '=', p.userId)
    .where('key_creation_unlocked_until', '>', p.now),
);

/**
 * The security confirmation: the signed-in user re-enters the password, which unlocks API key creation on this session
 * (only) for 5 minutes. Wrong passwords count against the same brute-force throttle as sign-in, so a stolen session
 * cannot be used to guess the password.
 */
export async function confirmPassword(db: Db, actor: InternalActor, password: string, client: Client): Promise<string> {
  if (actor.via !== 'session' || !actor.sessionId) throw accountErrors.sessionRequired('The security confirmation');
  const me = await currentUser(db, actor);
  if (!(await checkPassword(db, me.email, password, client))) throw accountErrors.wrongPassword();
  const [row] = await db.run(UNLOCK, { now: client.now, id: actor.sessionId });
  // The session ended between authentication and now (signed out elsewhere): nothing left to unlock.
  if (!row) throw accountErrors.sessionRequired('The security confirmation');
  return new Date(row.until).toISOString();
}

/**
 * For API key creation: passes only for a session whose password was confirmed in the last 5 minutes. An Internal key
 * is always refused (403 `confirmation_required`): a key cannot re-enter a password, and a key that could mint keys
 * would outlive every revocation of itself.
 */
export async function assertKeyCreationUnlocked(db: Db, actor: InternalActor, now: Date): Promise<void> {
  if (actor.via !== 'session' || !actor.sessionId) {
    throw accountErrors.confirmationRequired(
      'Creating an API key needs a security confirmation that only a signed-in user can give (an API key cannot re-enter a password); sign in and confirm your password',
    );
  }
  const rows = await db.run(UNLOCKED, { id: actor.sessionId, userId: actor.userId, now });
  if (!rows.length) {
    throw accountErrors.confirmationRequired(
      `Re-enter your password first (accounts.confirmPassword, POST /api/accounts/confirm-password): it unlocks API key creation for ${CONFIRMATION_MINUTES} minutes`,
    );
  }
}
