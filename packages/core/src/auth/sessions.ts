import type { Db, Plan, Role } from '@leadwire/db';
import type { InternalActor } from './actor.ts';
import { hashKey } from './key-material.ts';

export const SESSION_PREFIX = 'lws_';

interface SessionRow {
  id: string;
  user_id: string;
  organization_id: string;
  role: Role;
  plan: Plan;
  contact_booster: number;
}

/**
 * A session is valid while unexpired and while its user is active with the credential epoch it was issued under, so a
 * password change, a reset, "log out of all devices" or deactivation ends it on the next request.
 */
const FIND_SESSION = `
with s as (
  select s.id, s.user_id, s.organization_id, u.role, o.plan, o.contact_booster
  from sessions s
  join users u on u.id = s.user_id
  join organizations o on o.id = s.organization_id
  where s.token_hash = ? and s.expires_at > ?::timestamptz and u.active and u.credential_epoch = s.user_epoch
), touch as (
  update sessions set last_used_at = ?::timestamptz
  where id = (select id from s) and (last_used_at is null or last_used_at < ?::timestamptz - interval '1 minute')
)
select id, user_id, organization_id, role, plan, contact_booster from s`;

/** The live session `token` opens at `now` (the caller's clock), or null. */
export async function findSession(db: Db, token: string, now: Date): Promise<InternalActor | null> {
  const [row] = await db.execute<SessionRow[]>(FIND_SESSION, [hashKey(token), now, now, now]);
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
