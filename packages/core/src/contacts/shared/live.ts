import { qb, statement, type Db } from '@leadwire/db';
import { errors } from '../../errors.ts';
import { contactColumnsOf } from './columns.ts';
import type { ContactRow } from './row.ts';

const liveContact = (p: { orgId: string; id: string }) =>
  qb
    .selectFrom('contacts as c')
    .select(contactColumnsOf('c'))
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
