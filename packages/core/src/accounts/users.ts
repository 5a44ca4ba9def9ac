import type { Db, Role } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { accountErrors } from './errors.ts';
import type { MemberView } from './schemas.ts';
import { endAllCredentials } from './sessions.service.ts';

interface MemberRow {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  active: boolean;
  created_at: Date;
}

const MEMBER_COLUMNS = 'id, email, name, role, active, created_at';

function view(row: MemberRow): MemberView {
  return { id: row.id, email: row.email, name: row.name, role: row.role, active: row.active, createdAt: new Date(row.created_at).toISOString() };
}

/** Everyone in the caller's organization, deactivated users included (they can be reactivated). */
export async function listMembers(db: Db, actor: InternalActor): Promise<MemberView[]> {
  const rows = await db.execute<MemberRow[]>(
    `select ${MEMBER_COLUMNS} from users where organization_id = ? order by created_at, id`,
    [actor.orgId],
  );
  return rows.map(view);
}

/**
 * Membership changes of one organization run one at a time (a row lock on the organization), so two owners demoting or
 * deactivating each other at the same moment cannot leave it without an active owner. A user of another organization
 * is simply not found.
 */
async function lockTarget(tx: Db, actor: InternalActor, userId: string) {
  await tx.execute('select 1 from organizations where id = ? for update', [actor.orgId]);
  const [target] = await tx.execute<MemberRow[]>(`select ${MEMBER_COLUMNS} from users where id = ? and organization_id = ?`, [userId, actor.orgId]);
  if (!target) throw accountErrors.userNotFound(userId);
  const [row] = await tx.execute<{ n: number }[]>(
    `select count(*)::int as n from users where organization_id = ? and role = 'owner' and active and id <> ?`,
    [actor.orgId, userId],
  );
  return { target, otherActiveOwners: row!.n };
}

/** Owners only. The last active owner cannot be demoted. Roles are read on every request, so the change is immediate. */
export async function changeRole(db: Db, actor: InternalActor, userId: string, role: Role, now: Date): Promise<MemberView> {
  requireRole(actor, 'owner');
  return db.transaction(async (tx) => {
    const { target, otherActiveOwners } = await lockTarget(tx, actor, userId);
    if (target.role === 'owner' && target.active && role !== 'owner' && otherActiveOwners === 0) throw accountErrors.lastOwner();
    const [row] = await tx.execute<MemberRow[]>(
      `update users set role = ?, updated_at = ? where id = ? returning ${MEMBER_COLUMNS}`,
      [role, now, userId],
    );
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
    const [row] = await tx.execute<MemberRow[]>(
      `update users set active = ?, updated_at = ? where id = ? returning ${MEMBER_COLUMNS}`,
      [active, now, userId],
    );
    return view(row!);
  });
}
