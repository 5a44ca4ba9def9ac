import { type DB, type Db, expressionBuilder, qb, sql, statement } from '@leadwire/db';
import { assertKeyCreationUnlocked } from '../accounts/confirmation.ts';
import { createApiKey } from '../accounts/service.ts';
import type { InternalActor } from '../auth/actor.ts';
import { errors } from '../errors.ts';
import type { ApiKeyCreated, ApiKeyCreateInput, ApiKeyView } from './schemas.ts';

const DAY_MS = 86_400_000;

/** Owners and admins manage every key of the organization; members only the keys they created. */
const managesAll = (actor: InternalActor) => actor.role === 'owner' || actor.role === 'admin';

type KeyStatus = ApiKeyView['status'];

const keyAndOwner = expressionBuilder<DB & { k: DB['api_keys']; u: DB['users'] }, 'k' | 'u'>();

/** Mirrors authenticate.ts's checks, so the list tells the truth about which keys still work. */
const statusAt = (now: Date) =>
  keyAndOwner
    .case()
    .when('k.revoked_at', 'is not', null)
    .then(sql.lit<KeyStatus>('revoked'))
    .when(keyAndOwner.and([keyAndOwner('k.expires_at', 'is not', null), keyAndOwner('k.expires_at', '<=', sql<Date>`${now}::timestamptz`)]))
    .then(sql.lit<KeyStatus>('expired'))
    .when(
      keyAndOwner.or([
        keyAndOwner.not(keyAndOwner.ref('u.active')),
        keyAndOwner('u.credential_epoch', '<>', keyAndOwner.ref('k.owner_epoch')),
      ]),
    )
    .then(sql.lit<KeyStatus>('stopped'))
    .else(sql.lit<KeyStatus>('active'))
    .end()
    .as('status');

/** The list's columns over `k` (api_keys, or the revoked row) and its creator `u`. */
const VIEW = [
  'k.id',
  'k.name',
  'k.type',
  'k.permissions',
  'k.display_prefix',
  'k.created_at',
  'k.last_used_at',
  'k.expires_at',
  'k.revoked_at',
  'k.created_by_id',
  'u.email as created_by_email',
] as const;

const LIST_KEYS = statement<{ now: Date; orgId: string; managesAll: boolean; userId: string }>()((p) =>
  qb
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.created_by_id')
    .select([...VIEW, statusAt(p.now)])
    .where('k.organization_id', '=', p.orgId)
    .where((eb) => eb.or([sql<boolean>`${p.managesAll}`, eb('k.created_by_id', '=', p.userId)]))
    .orderBy('k.created_at', 'desc')
    .orderBy('k.id'),
);

const GET_KEY = statement<{ now: Date; id: string; orgId: string }>()((p) =>
  qb
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.created_by_id')
    .select([...VIEW, statusAt(p.now)])
    .where('k.id', '=', p.id)
    .where('k.organization_id', '=', p.orgId),
);

/** Keeps the first revocation time, so revoking again is a harmless repeat. */
const REVOKE_KEY = statement<{ now: Date; id: string; orgId: string; managesAll: boolean; userId: string }>()((p) =>
  qb
    .with('r', (db) =>
      db
        .updateTable('api_keys')
        .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', sql<Date>`${p.now}::timestamptz`) }))
        .where('id', '=', p.id)
        .where('organization_id', '=', p.orgId)
        .where((eb) => eb.or([sql<boolean>`${p.managesAll}`, eb('created_by_id', '=', p.userId)]))
        .returning([
          'id',
          'name',
          'type',
          'permissions',
          'display_prefix',
          'created_at',
          'last_used_at',
          'expires_at',
          'revoked_at',
          'created_by_id',
          'owner_epoch',
        ]),
    )
    .selectFrom('r as k')
    .innerJoin('users as u', 'u.id', 'k.created_by_id')
    .select([...VIEW, statusAt(p.now)]),
);

type KeyRow = NonNullable<(typeof GET_KEY)['row']>;

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
  const rows = await db.run(LIST_KEYS, { now, orgId: actor.orgId, managesAll: managesAll(actor), userId: actor.userId });
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
  const [row] = await db.run(GET_KEY, { now, id, orgId: actor.orgId });
  if (!row) throw new Error(`API key ${id} vanished right after it was created`);
  return { ...toView(row), value };
}

/**
 * Revokes on the spot: authentication reads revoked_at on every request, in every process. Keys the caller may not
 * manage (another tenant's, or a colleague's for a member) answer exactly like unknown ids.
 */
export async function revokeKey(db: Db, actor: InternalActor, id: string, now: Date): Promise<ApiKeyView> {
  const [row] = await db.run(REVOKE_KEY, { now, id, orgId: actor.orgId, managesAll: managesAll(actor), userId: actor.userId });
  if (!row) throw errors.notFound(`No API key with id ${id}`);
  return toView(row);
}
