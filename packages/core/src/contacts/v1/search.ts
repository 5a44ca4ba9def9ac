import type { Db } from '@leadwire/db';
import type { Actor } from '../../auth/actor.ts';
import { errors } from '../../errors.ts';
import { toContactView } from '../shared/row.ts';
import type { ContactView } from './schemas.ts';
import { FIND_BY_EMAIL } from './sql.ts';

/** Case-insensitive lookup by email (the schema lowercases and trims before we get here). */
export async function searchContactByEmail(db: Db, actor: Actor, email: string): Promise<ContactView> {
  const [row] = await db.run(FIND_BY_EMAIL, { orgId: actor.orgId, email });
  if (!row) throw errors.notFound(`No contact with email ${email}`);
  return toContactView(row);
}
