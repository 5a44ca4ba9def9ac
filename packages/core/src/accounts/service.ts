import { type ApiKeyType, type EntityManager, type Plan, PUBLIC_PERMISSIONS, type Role } from '@leadwire/db';
import { ApiKey, Organization, Pipeline, PipelineStage, User } from '@leadwire/db';
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

/** An organization, its owner and a default pipeline with stages, in one transaction. */
export async function createOrganization(em: EntityManager, input: NewOrganization) {
  const passwordHash = await hashPassword(input.ownerPassword);
  return em.transactional(async (tx) => {
    const email = input.ownerEmail.trim().toLowerCase();
    if (await tx.count(User, { email })) {
      throw new AppError(409, 'email_taken', `A user with email ${email} already exists`);
    }
    const org = tx.create(Organization, { name: input.name, plan: input.plan ?? 'starter' });
    const owner = tx.create(User, { organization: org, email, passwordHash, role: 'owner' satisfies Role });
    const pipeline = tx.create(Pipeline, { organization: org, name: DEFAULT_PIPELINE.name, isDefault: true });
    DEFAULT_PIPELINE.stages.forEach((name, position) =>
      tx.create(PipelineStage, { organization: org, pipeline, name, position }),
    );
    await tx.flush();
    return { orgId: org.id, userId: owner.id };
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

/** Creates a key and returns its value: the only time it exists outside the caller's hands. Only a hash is stored. */
export async function createApiKey(em: EntityManager, input: NewApiKey): Promise<{ id: string; value: string }> {
  const permissions = [...new Set(input.permissions ?? [])];
  if (input.type === 'internal' && permissions.length) {
    throw errors.validation([{ path: 'permissions', message: 'Internal keys carry the user\u2019s reach; permissions apply to Public API keys only' }]);
  }
  const unknown = permissions.filter((p) => !(PUBLIC_PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length) {
    throw errors.validation([{ path: 'permissions', message: `Unknown permission ${unknown.join(', ')}; valid: ${PUBLIC_PERMISSIONS.join(', ')}` }]);
  }
  const user = await em.findOne(User, { id: input.userId, organization: input.orgId });
  if (!user) throw errors.notFound(`No user ${input.userId} in organization ${input.orgId}`);
  if (!user.active) throw new AppError(409, 'user_inactive', 'Keys cannot be created for a deactivated user');
  const value = generateKeyValue();
  const key = em.create(ApiKey, {
    organization: input.orgId,
    createdBy: user,
    name: input.name,
    type: input.type,
    permissions,
    keyHash: hashKey(value),
    displayPrefix: displayPrefix(value),
    ownerEpoch: user.credentialEpoch,
    expiresAt: input.expiresAt ?? null,
  });
  await em.flush();
  return { id: key.id, value };
}

/** The operator's bootstrap: organization, owner, default pipeline, a Public key with every permission and an Internal key. */
export async function bootstrap(em: EntityManager, input: NewOrganization) {
  const { orgId, userId } = await createOrganization(em, input);
  const pub = await createApiKey(em.fork(), { orgId, userId, name: 'Bootstrap public key', type: 'public', permissions: PUBLIC_PERMISSIONS });
  const internal = await createApiKey(em.fork(), { orgId, userId, name: 'Bootstrap internal key', type: 'internal' });
  return { orgId, userId, publicKey: pub.value, internalKey: internal.value };
}
