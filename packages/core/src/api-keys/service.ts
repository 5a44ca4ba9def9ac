import { type ApiKeyType, columnList, type Db } from '@leadwire/db';
import { assertKeyCreationUnlocked } from '../accounts/confirmation.ts';
import { createApiKey } from '../accounts/service.ts';
import type { InternalActor } from '../auth/actor.ts';
import { errors } from '../errors.ts';
import type { ApiKeyCreated, ApiKeyCreateInput, ApiKeyView } from './schemas.ts';

const DAY_MS = 86_400_000;

/** Owners and admins manage every key of the organization; members only the keys they created. */
const managesAll = (actor: InternalActor) => actor.role === 'owner' || actor.role === 'admin';

interface KeyRow {
  id: string;
  name: string;
  type: ApiKeyType;
  permissions: string[];
  display_prefix: string;
  status: ApiKeyView['status'];
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_by_id: string;
  created_by_email: string;
}

/**
 * The list columns over `source` (api_keys or a CTE of it). The status mirrors authenticate.ts's checks so the list
 * tells the truth about which keys still work; its one parameter is the current time.
 */
const selectView = (source: string) => `
select k.id, k.name, k.type, k.permissions, k.display_prefix, k.created_at, k.last_used_at, k.expires_at, k.revoked_at,
  k.created_by_id, u.email as created_by_email,
  case
    when k.revoked_at is not null then 'revoked'
    when k.expires_at is not null and k.expires_at <= ?::timestamptz then 'expired'
    when not u.active or u.credential_epoch <> k.owner_epoch then 'stopped'
    else 'active'
  end as status
from ${source} k
join users u on u.id = k.created_by_id`;

const LIST_KEYS = `${selectView('api_keys')}
where k.organization_id = ? and (? or k.created_by_id = ?)
order by k.created_at desc, k.id`;

const GET_KEY = `${selectView('api_keys')} where k.id = ? and k.organization_id = ?`;

const COLUMNS = ['id', 'created_at', 'organization_id', 'created_by_id', 'name', 'type', 'permissions', 'key_hash', 'display_prefix', 'owner_epoch', 'expires_at', 'revoked_at', 'last_used_at'];

/** Keeps the first revocation time, so revoking again is a harmless repeat. */
const REVOKE_KEY = `
with r as (
  update api_keys set revoked_at = coalesce(revoked_at, ?::timestamptz)
  where id = ? and organization_id = ? and (? or created_by_id = ?)
  returning ${columnList(COLUMNS)}
)${selectView('r')}`;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function toView(row: KeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    permissions: row.permissions,
    displayPrefix: row.display_prefix,
    status: row.status,
    createdAt: new Date(row.created_at).toISOString(),
    lastUsedAt: iso(row.last_used_at),
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    createdBy: { id: row.created_by_id, email: row.created_by_email },
  };
}

export async function listKeys(db: Db, actor: InternalActor, now: Date): Promise<ApiKeyView[]> {
  const rows = await db.execute<KeyRow[]>(LIST_KEYS, [now, actor.orgId, managesAll(actor), actor.userId]);
  return rows.map(toView);
}

/**
 * Creates a key acting as the caller, after the security confirmation (spec "Authentication" 5); the value is in this
 * response and nowhere else, ever.
 */
export async function createKey(db: Db, actor: InternalActor, input: ApiKeyCreateInput, now: Date): Promise<ApiKeyCreated> {
  await assertKeyCreationUnlocked(db, actor, now);
  const { id, value } = await createApiKey(db, {
    orgId: actor.orgId,
    userId: actor.userId,
    name: input.name,
    type: input.type,
    permissions: input.type === 'public' ? (input.permissions ?? []) : [],
    expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * DAY_MS) : null,
  });
  const [row] = await db.execute<KeyRow[]>(GET_KEY, [now, id, actor.orgId]);
  if (!row) throw new Error(`API key ${id} vanished right after it was created`);
  return { ...toView(row), value };
}

/**
 * Revokes on the spot: authentication reads revoked_at on every request, in every process. Keys the caller may not
 * manage (another tenant's, or a colleague's for a member) answer exactly like unknown ids.
 */
export async function revokeKey(db: Db, actor: InternalActor, id: string, now: Date): Promise<ApiKeyView> {
  const [row] = await db.execute<KeyRow[]>(REVOKE_KEY, [now, id, actor.orgId, managesAll(actor), actor.userId, now]);
  if (!row) throw errors.notFound(`No API key with id ${id}`);
  return toView(row);
}
