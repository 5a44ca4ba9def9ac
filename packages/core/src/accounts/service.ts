import { type ApiKeyType, type Db, type Plan, PUBLIC_PERMISSIONS } from '@leadwire/db';
import { AppError, errors } from '../errors.ts';
import { displayPrefix, generateKeyValue, hashKey } from '../auth/key-material.ts';
import { hashPassword } from './passwords.ts';

export const DEFAULT_PIPELINE = { name: 'Sales', stages: ['New', 'Contacted', 'Qualified', 'Proposal', 'Won', 'Lost'] };

export interface NewOrganization {
  name: string;
  ownerEmail: string;
  ownerPassword: string;
  plan?: Plan;
}

/** An organization and its contact counter, which lives in a row of its own (see ContactCounter). */
const INSERT_ORGANIZATION = `
with o as (insert into organizations (name, plan) values (?, ?) returning id),
counter as (insert into contact_counters (organization_id) select id from o)
select id from o`;
const INSERT_OWNER = `insert into users (organization_id, email, password_hash, role) values (?, ?, ?, 'owner')
on conflict (email) do nothing returning id`;
const INSERT_DEFAULT_PIPELINE = `
with p as (insert into pipelines (organization_id, name, is_default) values (?, ?, true) returning id, organization_id)
insert into pipeline_stages (organization_id, pipeline_id, name, position)
select p.organization_id, p.id, s.name, s.position - 1 from p, unnest(?::text[]) with ordinality as s(name, position)`;

/** An organization, its owner and a default pipeline with stages, in one transaction. */
export async function createOrganization(db: Db, input: NewOrganization) {
  const passwordHash = await hashPassword(input.ownerPassword);
  const email = input.ownerEmail.trim().toLowerCase();
  return db.transaction(async (tx) => {
    const [org] = await tx.execute<{ id: string }[]>(INSERT_ORGANIZATION, [input.name, input.plan ?? 'starter']);
    const [owner] = await tx.execute<{ id: string }[]>(INSERT_OWNER, [org!.id, email, passwordHash]);
    if (!owner) throw new AppError('email_taken', `A user with email ${email} already exists`);
    await tx.execute(INSERT_DEFAULT_PIPELINE, [org!.id, DEFAULT_PIPELINE.name, DEFAULT_PIPELINE.stages]);
    return { orgId: org!.id, userId: owner.id };
  });
}

export interface NewApiKey {
  orgId: string;
  userId: string;
  name: string;
  type: ApiKeyType;
  /** Public keys only; defaults to none. Internal keys carry the user's reach instead. */
  permissions?: readonly string[];
  expiresAt?: Date | null;
}

/**
 * The key row carries its owner's credential epoch, so a password change or "log out everywhere" ends it. An inactive
 * owner gets no key: the insert then writes nothing and still reports the owner, so the refusal can say why.
 */
const INSERT_KEY = `
with u as (select id, organization_id, active, credential_epoch from users where id = ? and organization_id = ?),
k as (
  insert into api_keys (organization_id, created_by_id, name, type, permissions, key_hash, display_prefix, owner_epoch, expires_at)
  select u.organization_id, u.id, v.name, v.type, v.permissions, v.key_hash, v.display_prefix, u.credential_epoch, v.expires_at
  from u, (select ?::text as name, ?::text as type, ?::text[] as permissions, ?::text as key_hash, ?::text as display_prefix,
    ?::timestamptz as expires_at) v
  where u.active
  returning id
)
select coalesce((select id from k), u.id) as id, u.active from u`;

/** Creates a key and returns its value: the only time it exists outside the caller's hands. Only a hash is stored. */
export async function createApiKey(db: Db, input: NewApiKey): Promise<{ id: string; value: string }> {
  const permissions = [...new Set(input.permissions ?? [])];
  if (input.type === 'internal' && permissions.length) {
    throw errors.validation([{ path: 'permissions', message: 'Internal keys carry the user\u2019s reach; permissions apply to Public API keys only' }]);
  }
  const unknown = permissions.filter((p) => !(PUBLIC_PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length) {
    throw errors.validation([{ path: 'permissions', message: `Unknown permission ${unknown.join(', ')}; valid: ${PUBLIC_PERMISSIONS.join(', ')}` }]);
  }
  const value = generateKeyValue();
  const [key] = await db.execute<{ id: string; active: boolean }[]>(INSERT_KEY, [
    input.userId,
    input.orgId,
    input.name,
    input.type,
    permissions,
    hashKey(value),
    displayPrefix(value),
    input.expiresAt ?? null,
  ]);
  if (!key) throw errors.notFound(`No user ${input.userId} in organization ${input.orgId}`);
  if (!key.active) throw new AppError('user_inactive', 'Keys cannot be created for a deactivated user');
  return { id: key.id, value };
}

/** The operator's bootstrap: organization, owner, default pipeline, a Public key with every permission and an Internal key. */
export async function bootstrap(db: Db, input: NewOrganization) {
  const { orgId, userId } = await createOrganization(db, input);
  const pub = await createApiKey(db, { orgId, userId, name: 'Bootstrap public key', type: 'public', permissions: PUBLIC_PERMISSIONS });
  const internal = await createApiKey(db, { orgId, userId, name: 'Bootstrap internal key', type: 'internal' });
  return { orgId, userId, publicKey: pub.value, internalKey: internal.value };
}
