import type { ApiKeyType, Db, Plan, Role } from '@leadwire/db';
import { errors } from '../errors.ts';
import type { Actor } from './actor.ts';
import { bearerToken, hashKey, isWellFormedKey } from './key-material.ts';

export interface RateWindow {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** When the current one-minute window ends. */
  resetAt: Date;
}

interface AuthRow {
  id: string;
  organization_id: string;
  created_by_id: string;
  type: ApiKeyType;
  permissions: string[];
  role: Role;
  plan: Plan;
  contact_booster: number;
  hits: number | null;
  window_end: Date;
  day_hits: number | null;
  day_end: Date;
}

/**
 * One round trip resolves the key, checks its owner's state and counts the request in the shared per-minute window.
 * Every check reads the database, so revocation, deactivation and password changes take effect on the very next
 * request in every server process. The last-used stamp is written at most once a minute to keep the hot row cool.
 */
export const AUTHENTICATE_SQL = `
with k as (
  select k.id, k.organization_id, k.created_by_id, k.type, k.permissions, u.role, o.plan, o.contact_booster
  from api_keys k
  join users u on u.id = k.created_by_id
  join organizations o on o.id = k.organization_id
  where k.key_hash = ? and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
    and u.active and u.credential_epoch = k.owner_epoch
), hit as (
  insert into rate_limit_counters (bucket, window_start, count)
  select 'key:' || k.id, date_trunc('minute', now()), 1 from k where k.type = ?
  on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
  returning count
), hit_day as (
  insert into rate_limit_counters (bucket, window_start, count)
  select 'key:' || k.id || ':day', date_trunc('day', now(), 'UTC'), 1 from k where k.type = ? and k.type = 'internal'
  on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
  returning count
), touch as (
  update api_keys set last_used_at = now()
  where id = (select id from k) and (last_used_at is null or last_used_at < now() - interval '1 minute')
)
select k.id, k.organization_id, k.created_by_id, k.type, k.permissions, k.role, k.plan, k.contact_booster,
  (select count from hit) as hits, date_trunc('minute', now()) + interval '1 minute' as window_end,
  (select count from hit_day) as day_hits, date_trunc('day', now(), 'UTC') + interval '1 day' as day_end
from k`;

export interface Authenticated {
  actor: Actor;
  /** The per-minute window; null when the key was refused for its surface (not counted). */
  window: RateWindow | null;
  /** The per-day window: Internal keys only. */
  dayWindow: RateWindow | null;
}

/**
 * Resolves `Authorization: Bearer <key>` for the given surface. A key of the other type is refused with
 * wrong_api_surface and is not counted against the surface's rate limit.
 */
export async function authenticate(
  db: Db,
  authorization: string | undefined,
  surface: ApiKeyType,
): Promise<Authenticated> {
  const value = bearerToken(authorization);
  if (!value) throw errors.unauthorized('Missing API key: send Authorization: Bearer <API_KEY>');
  if (!isWellFormedKey(value)) throw errors.unauthorized('Malformed API key');
  const rows = await db.execute<AuthRow[]>(AUTHENTICATE_SQL, [hashKey(value), surface, surface]);
  const row = rows[0];
  if (!row) throw errors.unauthorized('Invalid, revoked or expired API key');
  if (row.type !== surface) {
    throw errors.wrongSurface(
      surface === 'public'
        ? 'Internal keys cannot call the public API /v1; create a Public API key'
        : 'Public API keys only work on /v1; use an Internal key or a session here',
    );
  }
  return {
    actor: {
      orgId: row.organization_id,
      userId: row.created_by_id,
      apiKeyId: row.id,
      keyType: row.type,
      permissions: row.permissions,
      role: row.role,
      plan: row.plan,
      contactBooster: row.contact_booster,
    },
    window: row.hits === null ? null : { count: Number(row.hits), resetAt: new Date(row.window_end) },
    dayWindow: row.day_hits === null ? null : { count: Number(row.day_hits), resetAt: new Date(row.day_end) },
  };
}
