import { randomUUID } from 'node:crypto';
import { columnList, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { emitEvents, type PendingEvent } from '../events/outbox.ts';
import type { NonprofitStatus, VerificationRecordInput, VerificationView } from './schemas.ts';

interface VerificationRow {
  id: string;
  status: VerificationView['status'];
  registration_number: string | null;
  evidence: Record<string, unknown>;
  recorded_by_id: string | null;
  created_at: Date;
}

/** Verification history is for the people who run the organization's account. */
const MANAGERS = ['owner', 'admin'] as const;

const ACTIVATED_AT = `select nonprofit_activated_at from organizations where id = ?`;
const COLUMNS = ['id', 'created_at', 'organization_id', 'recorded_by_id', 'status', 'registration_number', 'evidence'];
const VERIFICATIONS = `select ${columnList(COLUMNS)} from nonprofit_verifications where organization_id = ? order by created_at desc, id desc limit 100`;
const INSERT = `
insert into nonprofit_verifications (id, organization_id, recorded_by_id, status, registration_number, evidence, created_at)
values (?, ?, ?, ?, ?, ?::jsonb, ?)
returning ${columnList(COLUMNS)}`;
/** Only the first verified verification matches; a concurrent second one waits for the row and then finds it set. */
const ACTIVATE = `
update organizations set nonprofit_activated_at = ?, updated_at = ?
where id = ? and nonprofit_activated_at is null
returning nonprofit_activated_at`;

const toView = (r: VerificationRow): VerificationView => ({
  id: r.id,
  status: r.status,
  registrationNumber: r.registration_number,
  evidence: r.evidence,
  recordedBy: r.recorded_by_id,
  createdAt: iso(r.created_at),
});

export async function nonprofitStatus(db: Db, actor: InternalActor): Promise<NonprofitStatus> {
  requireRole(actor, ...MANAGERS);
  const [org] = await db.execute<{ nonprofit_activated_at: Date | null }[]>(ACTIVATED_AT, [actor.orgId]);
  const rows = await db.execute<VerificationRow[]>(VERIFICATIONS, [actor.orgId]);
  return { nonprofitActivatedAt: isoOrNull(org?.nonprofit_activated_at ?? null), verifications: rows.map(toView) };
}

/**
 * Records a verification (nonprofit.verification_recorded, `data.verification`). The first verified one activates
 * the nonprofit plan: nonprofit_activated_at is set and nonprofit.activated is emitted, once per organization
 * (`data.organization` with id and nonprofitActivatedAt, plus `data.verification`). A later rejection does not
 * deactivate it: the spec has no such transition.
 */
export async function recordVerification(db: Db, actor: InternalActor, input: VerificationRecordInput, now: Date) {
  requireRole(actor, ...MANAGERS);
  return db.transaction(async (tx) => {
    const [row] = await tx.execute<VerificationRow[]>(INSERT, [
      randomUUID(),
      actor.orgId,
      actor.userId,
      input.status,
      input.registrationNumber ?? null,
      JSON.stringify(input.evidence ?? {}),
      now,
    ]);
    const verification = toView(row!);
    const events: PendingEvent[] = [
      { orgId: actor.orgId, event: 'nonprofit.verification_recorded', source: 'app', data: { verification }, at: now },
    ];
    let activatedAt: string | null = null;
    if (input.status === 'verified') {
      const [activated] = await tx.execute<{ nonprofit_activated_at: Date }[]>(ACTIVATE, [now, now, actor.orgId]);
      if (activated) {
        activatedAt = iso(activated.nonprofit_activated_at);
        events.push({
          orgId: actor.orgId,
          event: 'nonprofit.activated',
          source: 'app',
          data: { organization: { id: actor.orgId, nonprofitActivatedAt: activatedAt }, verification },
          at: now,
        });
      }
    }
    await emitEvents(tx, events);
    if (activatedAt) return { verification, nonprofitActivatedAt: activatedAt, activated: true };
    const [org] = await tx.execute<{ nonprofit_activated_at: Date | null }[]>(ACTIVATED_AT, [actor.orgId]);
    return { verification, nonprofitActivatedAt: isoOrNull(org?.nonprofit_activated_at ?? null), activated: false };
  });
}
