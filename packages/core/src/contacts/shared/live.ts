import { qb, statement, type Db } from '@leadwire/db';
import { errors } from '../../errors.ts';
import { qualified } from '../../records/query.ts';
import type { ContactRow } from './row.ts';

/**
 * Every column of a contact, as `ContactRow` wants them (a missing one fails the type check where a statement's row is
 * returned as a ContactRow): for the statements outside contacts/ that hand a whole contact to scoring or events.
 */
export const CONTACT_ROW_COLUMNS = [
  'id',
  'organization_id',
  'email',
  'first_name',
  'last_name',
  'phone',
  'job_title',
  'website',
  'linkedin',
  'tags',
  'custom',
  'source',
  'lead_score',
  'score_adjustment',
  'score_override',
  'stage',
  'company_id',
  'email_consent',
  'sms_consent',
  'deleted_at',
  'created_at',
  'updated_at',
] as const;

const liveContact = (p: { orgId: string; id: string }) =>
  qb
    .selectFrom('contacts as c')
    .select(qualified('c', CONTACT_ROW_COLUMNS))
    .where('c.id', '=', p.id)
    .where('c.organization_id', '=', p.orgId)
    .where('c.deleted_at', 'is', null);

type Params = { orgId: string; id: string };
const LIVE = {
  none: statement<Params>()((p) => liveContact(p)),
  share: statement<Params>()((p) => liveContact(p).forShare()),
  update: statement<Params>()((p) => liveContact(p).forUpdate()),
};

/**
 * The live (not trashed) contact `id` of the organization, or 404: a foreign or trashed id looks unknown. `lock` takes a
 * row lock so the contact cannot be trashed or rescored underneath the caller's transaction.
 */
export async function requireLiveContact(db: Db, orgId: string, id: string, lock?: 'share' | 'update'): Promise<ContactRow> {
  const [row] = await db.run(LIVE[lock ?? 'none'], { orgId, id });
  if (!row) throw errors.notFound(`No contact with id ${id}`);
  return row;
}
