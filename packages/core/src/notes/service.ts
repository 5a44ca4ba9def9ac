import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { errors } from '../errors.ts';

/** Inserts only when the contact is live and belongs to the caller's organization; foreign ids look unknown. */
const INSERT_NOTE = `
insert into notes (id, organization_id, contact_id, author_id, body, created_at)
select ?, c.organization_id, c.id, ?, ?, ? from contacts c
where c.id = ? and c.organization_id = ? and c.deleted_at is null
returning id, contact_id, body, created_at`;

export async function addNote(db: Db, actor: Actor, contactId: string, body: string, now: Date) {
  const [row] = await db.execute<{ id: string; contact_id: string; body: string; created_at: Date }[]>(INSERT_NOTE, [
    randomUUID(),
    actor.userId,
    body,
    now,
    contactId,
    actor.orgId,
  ]);
  if (!row) throw errors.notFound(`No contact with id ${contactId}`);
  return { id: row.id, contactId: row.contact_id, body: row.body, createdAt: new Date(row.created_at).toISOString() };
}
