import { type ApiKeyType, type Db, type Plan, PUBLIC_PERMISSIONS, qb, sql, statement } from '@leadwire/db';
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
const INSERT_ORGANIZATION = statement<{ name: string; plan: Plan }>()((p) =>
  qb
    .with('o', (db) => db.insertInto('organizations').values({ name: p.name, plan: p.plan }).returning('id'))
    .with('counter', (db) => db.insertInto('contact_counters').columns(['organization_id']).expression(db.selectFrom('o').select('o.id')))
    .selectFrom('o')
    .select('o.id'),
);
const INSERT_OWNER = statement<{ orgId: string; email: string; passwordHash: string }>()((p) =>
  qb
    .insertInto('users')
    .values({ organization_id: p.orgId, email: p.email, password_hash: p.passwordHash, role: sql.lit('owner') })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning('id'),
);
const INSERT_DEFAULT_PIPELINE = statement<{ orgId: string; name: string; stages: string[] }>()((p) =>
  qb
    .with('p', (db) =>
      db
        .insertInto('pipelines')
        .values({ organization_id: p.orgId, name: p.name, is_default: sql.lit(true) })
        .returning(['id', 'organization_id']),
    )
    .insertInto('pipeline_stages')
    .columns(['organization_id', 'pipeline_id', 'name', 'position'])
    .expression((eb) =>
      eb
        .selectFrom([
          'p',
          sql<{ name: string; position: number }>`unnest(${p.stages}::text[]) with ordinality`.as<'s'>(sql`s(name, position)`),
        ])
        .select((eb) => ['p.organization_id', 'p.id as pipeline_id', 's.name', eb(eb.ref('s.position'), '-', sql.lit(1)).as('position')]),
    ),
);

/** An organization, its owner and a default pipeline with stages, in one transaction. */
export async function createOrganization(db: Db, input: NewOrganization) {
  const passwordHash = await hashPassword(input.ownerPassword);
  const email = input.ownerEmail.trim().toLowerCase();
  return db.transaction(async (tx) => {
    const [org] = await tx.run(INSERT_ORGANIZATION, { name: input.name, plan: input.plan ?? 'starter' });
    const [owner] = await tx.run(INSERT_OWNER, { orgId: org!.id, email, passwordHash });
    if (!owner) throw new AppError('email_taken', `A user with email ${email} already exists`);
    await tx.run(INSERT_DEFAULT_PIPELINE, { orgId: org!.id, name: DEFAULT_PIPELINE.name, stages: DEFAULT_PIPELINE.stages });
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
const INSERT_KEY = statement<{
  userId: string;
  orgId: string;
  name: string;
  type: ApiKeyType;
  permissions: string[];
  keyHash: string;
  displayPrefix: string;
  expiresAt: Date | null;
}>()((p) =>
  qb
    .with('u', (db) =>
      db
        .selectFrom('users')
        .select(['id', 'organization_id', 'active', 'credential_epoch'])
        .where('id', '=', p.userId)
        .where('organization_id', '=', p.orgId),
    )
    .with('k', (db) =>
      db
        .insertInto('api_keys')
        .columns([
          'organization_id',
          'created_by_id',
          'name',
          'type',
          'permissions',
          'key_hash',
          'display_prefix',
          'owner_epoch',
          'expires_at',
        ])
        .expression(
          db
            .selectFrom('u')
            .select([
              'u.organization_id',
              'u.id as created_by_id',
              sql<string>`${p.name}::text`.as('name'),
              sql<ApiKeyType>`${p.type}::text`.as('type'),
              sql<string[]>`${p.permissions}::text[]`.as('permissions'),
              sql<string>`${p.keyHash}::text`.as('key_hash'),
              sql<string>`${p.displayPrefix}::text`.as('display_prefix'),
              'u.credential_epoch as owner_epoch',
              sql<Date | null>`${p.expiresAt}::timestamptz`.as('expires_at'),
            ])
            .where((eb) => eb.ref('u.active')),
        )
        .returning('id'),
    )
    .selectFrom('u')
    .select((eb) => [eb.fn.coalesce(eb.selectFrom('k').select('k.id').$asScalar(), 'u.id').as('id'), 'u.active']),
);

/** Creates a key and returns its value: the only time it exists outside the caller's hands. Only a hash is stored. */
export async function createApiKey(db: Db, input: NewApiKey): Promise<{ id: string; value: string }> {
  const permissions = [...new Set(input.permissions ?? [])];
  if (input.type === 'internal' && permissions.length) {
    throw errors.validation([
      { path: 'permissions', message: 'Internal keys carry the user\u2019s reach; permissions apply to Public API keys only' },
    ]);
  }
  const unknown = permissions.filter((p) => !(PUBLIC_PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length) {
    throw errors.validation([
      { path: 'permissions', message: `Unknown permission ${unknown.join(', ')}; valid: ${PUBLIC_PERMISSIONS.join(', ')}` },
    ]);
  }
  const value = generateKeyValue();
  const [key] = await db.run(INSERT_KEY, {
    userId: input.userId,
    orgId: input.orgId,
    name: input.name,
    type: input.type,
    permissions,
    keyHash: hashKey(value),
    displayPrefix: displayPrefix(value),
    expiresAt: input.expiresAt ?? null,
  });
  if (!key) throw errors.notFound(`No user ${input.userId} in organization ${input.orgId}`);
  if (!key.active) throw new AppError('user_inactive', 'Keys cannot be created for a deactivated user');
  return { id: key.id, value };
}

const USER_OF_EMAIL = statement<{ email: string }>()((p) =>
  qb.selectFrom('users').select(['id', 'organization_id']).where('email', '=', p.email),
);

/**
 * The user an email belongs to and its organization (emails are unique across organizations), for the operator's
 * `create-key --email`: a newcomer who lost the keys bootstrap printed knows the email, never the two ids.
 */
export async function userOfEmail(db: Db, email: string): Promise<{ orgId: string; userId: string }> {
  const normalized = email.trim().toLowerCase();
  const [user] = await db.run(USER_OF_EMAIL, { email: normalized });
  if (!user) throw errors.notFound(`No user with email ${normalized}`);
  return { orgId: user.organization_id, userId: user.id };
}

/** The operator's bootstrap: organization, owner, default pipeline, a Public key with every permission and an Internal key. */
export async function bootstrap(db: Db, input: NewOrganization) {
  const { orgId, userId } = await createOrganization(db, input);
  const pub = await createApiKey(db, { orgId, userId, name: 'Bootstrap public key', type: 'public', permissions: PUBLIC_PERMISSIONS });
  const internal = await createApiKey(db, { orgId, userId, name: 'Bootstrap internal key', type: 'internal' });
  return { orgId, userId, publicKey: pub.value, internalKey: internal.value };
}
