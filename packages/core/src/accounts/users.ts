import { qb, sql, statement, type Db, type Role } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { accountErrors } from './errors.ts';
import type { MemberView } from './schemas.ts';
import { endAllCredentials } from './sessions.service.ts';

/** What the member screen shows of a user. */
const MEMBER = ['id', 'email', 'name', 'role', 'active', 'created_at'] as const;

const MEMBERS = statement<{ orgId: string }>()((p) =>
  qb.selectFrom('users').select(MEMBER).where('organization_id', '=', p.orgId).orderBy('created_at').orderBy('id'),
);

type MemberRow = NonNullable<(typeof MEMBERS)['row']>;

const LOCK_ORGANIZATION = statement<{ orgId: string }>()((p) =>
  qb.selectFrom('organizations').select(sql.lit(1).as('locked')).where('id', '=', p.orgId).forUpdate(),
);

const MEMBER_BY_ID = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('users').select(MEMBER).where('id', '=', p.id).where('organization_id', '=', p.orgId),
);

const OTHER_ACTIVE_OWNERS = statement<{ orgId: string; id: string }>()((p) =>
  qb
    .selectFrom('users')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('organization_id', '=', p.orgId)
    .where('role', '=', sql.lit('owner' as const))
    .where((eb) => eb.ref('active'))
    .where('id', '<>', p.id),
);

const SET_ROLE = statement<{ role: Role; now: Date; id: string }>()((p) =>
  qb.updateTable('users').set({ role: p.role, updated_at: p.now }).where('id', '=', p.id).returning(MEMBER),
);

const SET_ACTIVE = statement<{ active: boolean; now: Date; id: string }>()((p) =>
  qb.updateTable('users').set({ active: p.active, updated_at: p.now }).where('id', '=', p.id).returning(MEMBER),
);

function view(row: MemberRow): MemberView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    active: row.active,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** Everyone in the caller's organization, deactivated users included (they can be reactivated). */
export async function listMembers(db: Db, actor: InternalActor): Promise<MemberView[]> {
  const rows = await db.run(MEMBERS, { orgId: actor.orgId });
  return rows.map(view);
}

/**
 * Membership changes of one organization run one at a time (a row lock on the organization), so two owners demoting or
 * deactivating each other at the same moment cannot leave it without an active owner. A user of another organization
 * is simply not found.
 */
async function lockTarget(tx: Db, actor: InternalActor, userId: string) {
  await tx.run(LOCK_ORGANIZATION, { orgId: actor.orgId });
  const [target] = await tx.run(MEMBER_BY_ID, { id: userId, orgId: actor.orgId });
  if (!target) throw accountErrors.userNotFound(userId);
  const [row] = await tx.run(OTHER_ACTIVE_OWNERS, { orgId: actor.orgId, id: userId });
  return { target, otherActiveOwners: row!.n };
}

/** Owners only. The last active owner cannot be demoted. Roles are read on every request, so the change is immediate. */
export async function changeRole(db: Db, actor: InternalActor, userId: string, role: Role, now: Date): Promise<MemberView> {
  requireRole(actor, 'owner');
  return db.transaction(async (tx) => {
    const { target, otherActiveOwners } = await lockTarget(tx, actor, userId);
    if (target.role === 'owner' && target.active && role !== 'owner' && otherActiveOwners === 0) throw accountErrors.lastOwner();
    const [row] = await tx.run(SET_ROLE, { role, now, id: userId });
    return view(row!);
  });
}

/**
 * Owners and admins; only an owner may act on an owner. Deactivation moves the credential epoch, so the user's sessions
 * and every API key the user created stop at once; reactivation does not bring them back.
 */
export async function setActive(db: Db, actor: InternalActor, userId: string, active: boolean, now: Date): Promise<MemberView> {
  requireRole(actor, 'owner', 'admin');
  if (!active && userId === actor.userId) throw accountErrors.cannotDeactivateSelf();
  return db.transaction(async (tx) => {
    const { target, otherActiveOwners } = await lockTarget(tx, actor, userId);
    if (target.role === 'owner' && actor.role !== 'owner') throw accountErrors.ownersOnly();
    if (!active && target.role === 'owner' && otherActiveOwners === 0) throw accountErrors.lastOwner();
    if (target.active === active) return view(target);
    if (!active) await endAllCredentials(tx, userId, now);
    const [row] = await tx.run(SET_ACTIVE, { active, now, id: userId });
    return view(row!);
  });
}
