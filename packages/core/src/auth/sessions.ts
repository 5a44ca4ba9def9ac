import { type Db, qb, sql, statement } from '@leadwire/db';
import type { InternalActor } from './actor.ts';
import { hashKey } from './key-material.ts';

export const SESSION_PREFIX = 'lws_';

/**
 * A session is valid while unexpired and while its user is active with the credential epoch it was issued under, so a
 * password change, a reset, "log out of all devices" or deactivation ends it on the next request.
 */
const FIND_SESSION = statement<{ tokenHash: string; now: Date }>()((p) =>
  qb
    .with('s', (db) =>
      db
        .selectFrom('sessions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        .innerJoin('organizations as o', 'o.id', 's.organization_id')
        .select(['s.id', 's.user_id', 's.organization_id', 'u.role', 'o.plan', 'o.contact_booster'])
        .where('s.token_hash', '=', p.tokenHash)
        .where('s.expires_at', '>', sql<Date>`${p.now}::timestamptz`)
        .where((eb) => eb.ref('u.active'))
        .whereRef('u.credential_epoch', '=', 's.user_epoch'),
    )
    .with('touch', (db) =>
      db
        .updateTable('sessions')
        .set({ last_used_at: sql<Date>`${p.now}::timestamptz` })
        .where('id', '=', db.selectFrom('s').select('s.id'))
        .where((eb) =>
          eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`${p.now}::timestamptz - interval '1 minute'`)]),
        ),
    )
    .selectFrom('s')
    .select(['id', 'user_id', 'organization_id', 'role', 'plan', 'contact_booster']),
);

/** The live session `token` opens at `now` (the caller's clock), or null. */
export async function findSession(db: Db, token: string, now: Date): Promise<InternalActor | null> {
  const [row] = await db.run(FIND_SESSION, { tokenHash: hashKey(token), now });
  if (!row) return null;
  return {
    orgId: row.organization_id,
    userId: row.user_id,
    role: row.role,
    via: 'session',
    sessionId: row.id,
    apiKeyId: null,
    plan: row.plan,
    contactBooster: row.contact_booster,
  };
}
