import { qb, sql } from '@leadwire/db';

/**
 * API keys that stand at `now`, each beside its owner (`k`, `u`): not revoked, not expired, and the owner active at the
 * credential epoch the key was made under (a password change or reset moves the epoch and so ends every key of the
 * user). The one statement of that rule for the statements that read keys (authenticate.ts, resolve-key.ts,
 * envelope-sql.ts); the one-trip functions of Migration20261128150000 say the same in PL/pgSQL.
 */
export const standingKeys = (now: Date) =>
  qb
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.created_by_id')
    .where('k.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', sql<Date>`${now}::timestamptz`)]))
    .where((eb) => eb.ref('u.active'))
    .whereRef('u.credential_epoch', '=', 'k.owner_epoch');

/** The same keys with what an actor is made of: the key, its owner's role, its organization's plan and booster. */
export const standingKeyActors = (now: Date) =>
  standingKeys(now)
    .innerJoin('organizations as o', 'o.id', 'k.organization_id')
    .select([
      'k.id',
      'k.organization_id',
      'k.created_by_id',
      'k.type',
      'k.permissions',
      'k.expires_at',
      'u.role',
      'o.plan',
      'o.contact_booster',
    ]);
