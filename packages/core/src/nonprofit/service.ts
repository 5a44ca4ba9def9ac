import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type DB, type Db } from '@leadwire/db';
import type { Selectable } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { emitEvents, type PendingEvent } from '../events/outbox.ts';
import type { NonprofitStatus, VerificationRecordInput, VerificationView } from './schemas.ts';

/** Verification history is for the people who run the organization's account. */
const MANAGERS = ['owner', 'admin'] as const;

const ACTIVATED_AT = statement<{ orgId: string }>()((p) =>
  qb.selectFrom('organizations').select('nonprofit_activated_at').where('id', '=', p.orgId),
);
/** What a verification's view is made of; the insert returns the same columns the history selects. */
const VERIFICATION_COLUMNS = ['id', 'created_at', 'recorded_by_id', 'status', 'registration_number', 'evidence'] as const;
type VerificationRow = Pick<Selectable<DB['nonprofit_verifications']>, (typeof VERIFICATION_COLUMNS)[number]>;
const VERIFICATIONS = statement<{ orgId: string }>()((p) =>
  qb
    .selectFrom('nonprofit_verifications')
    .select(VERIFICATION_COLUMNS)
    .where('organization_id', '=', p.orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(sql.lit(100)),
);
interface NewVerification {
  id: string;
  orgId: string;
  userId: string;
  status: VerificationView['status'];
  registrationNumber: string | null;
  /** JSON text. */
  evidence: string;
  now: Date;
}
const INSERT = statement<NewVerification>()((p) =>
  qb
    .insertInto('nonprofit_verifications')
    .values({
      id: p.id,
      organization_id: p.orgId,
      recorded_by_id: p.userId,
      status: p.status,
      registration_number: p.registrationNumber,
      evidence: sql<Record<string, unknown>>`${p.evidence}::jsonb`,
      created_at: p.now,
    })
    .returning(VERIFICATION_COLUMNS),
);
/** Only the first verified verification matches; a concurrent second one waits for the row and then finds it set. */
const ACTIVATE = statement<{ now: Date; orgId: string }>()((p) =>
  qb
    .updateTable('organizations')
    .set({ nonprofit_activated_at: p.now, updated_at: p.now })
    .where('id', '=', p.orgId)
    .where('nonprofit_activated_at', 'is', null)
    .returning('nonprofit_activated_at'),
);

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
  const [org] = await db.run(ACTIVATED_AT, { orgId: actor.orgId });
  const rows = await db.run(VERIFICATIONS, { orgId: actor.orgId });
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
    const [row] = await tx.run(INSERT, {
      id: randomUUID(),
      orgId: actor.orgId,
      userId: actor.userId,
      status: input.status,
      registrationNumber: input.registrationNumber ?? null,
      evidence: JSON.stringify(input.evidence ?? {}),
      now,
    });
    const verification = toView(row!);
    const events: PendingEvent[] = [
      { orgId: actor.orgId, event: 'nonprofit.verification_recorded', source: 'app', data: { verification }, at: now },
    ];
    let activatedAt: string | null = null;
    if (input.status === 'verified') {
      const [activated] = await tx.run(ACTIVATE, { now, orgId: actor.orgId });
      if (activated?.nonprofit_activated_at) {
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
    const [org] = await tx.run(ACTIVATED_AT, { orgId: actor.orgId });
    return { verification, nonprofitActivatedAt: isoOrNull(org?.nonprofit_activated_at ?? null), activated: false };
  });
}
