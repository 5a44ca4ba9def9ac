import { randomUUID } from 'node:crypto';
import { qb, statement, type Db } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { errors } from '../errors.ts';

/** Inserts only when the contact is live and belongs to the caller's organization; foreign ids look unknown. */
const INSERT_NOTE = statement<{ id: string; authorId: string; body: string; now: Date; contactId: string; orgId: string }>()((p) =>
  qb
    .insertInto('notes')
    .columns(['id', 'organization_id', 'contact_id', 'author_id', 'body', 'created_at'])
    .expression(
      qb
        .selectFrom('contacts as c')
        .select((eb) => [
          eb.val(p.id).as('id'),
          'c.organization_id',
          'c.id as contact_id',
          eb.val(p.authorId).as('author_id'),
          eb.val(p.body).as('body'),
          eb.val(p.now).as('created_at'),
        ])
        .where('c.id', '=', p.contactId)
        .where('c.organization_id', '=', p.orgId)
        .where('c.deleted_at', 'is', null),
    )
    .returning(['id', 'contact_id', 'body', 'created_at']),
);

export async function addNote(db: Db, actor: Actor, contactId: string, body: string, now: Date) {
  const [row] = await db.run(INSERT_NOTE, { id: randomUUID(), authorId: actor.userId, body, now, contactId, orgId: actor.orgId });
  if (!row) throw errors.notFound(`No contact with id ${contactId}`);
  return { id: row.id, contactId: row.contact_id, body: row.body, createdAt: new Date(row.created_at).toISOString() };
}
