import { type Db, qb, sql, statement } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import { errors } from '../../errors.ts';
import { emitEvents } from '../../events/outbox.ts';
import { contactCap } from '../../limits/plans.ts';
import { contactErrors } from './errors.ts';
import { iso } from '../../records/dates.ts';
import { purgeAfter, trashCutoff } from './row.ts';
import type { AppContact } from './schemas.ts';
import * as q from './sql.ts';
import { assertEmailFree, guardEmail, loadContact } from './write.ts';
import { toEventContact } from '../shared/row.ts';
import { BUMP_CONTACT_COUNT, LOCK_CONTACT_COUNT } from '../shared/sql.ts';
import { transact } from '../shared/transact.ts';

/** Moves a live contact to trash. Any role may: it is recoverable for 30 days. */
export async function trashContact(db: Db, actor: InternalActor, id: string, now: Date) {
  return transact(db, async (tx) => {
    // Contact row first, organization row second: the same order as the upsert path, so the two cannot deadlock.
    const [row] = await tx.run(q.LOCK_LIVE, { id, orgId: actor.orgId });
    if (!row) throw contactErrors.notFound(id);
    await tx.run(q.TRASH, { now, id });
    // Trashed contacts do not count against the plan cap; a restore counts it again.
    await tx.run(BUMP_CONTACT_COUNT, { by: -1, orgId: actor.orgId });
    await emitEvents(tx, [
      { orgId: actor.orgId, event: 'contact.deleted', source: 'app', data: { contact: toEventContact(row) }, at: now },
    ]);
    return { id, deletedAt: now.toISOString(), purgeAfter: purgeAfter(now).toISOString() };
  });
}

/**
 * Brings a trashed contact back (owner or admin, within 30 days). It must fit again: its email may have been taken by
 * a live contact meanwhile (409, naming that contact) and the organization may have reached its cap. Emits
 * `contact.created` with `restored: true`: a receiver that removed its copy on `contact.deleted` re-creates it.
 */
export async function restoreContact(db: Db, actor: InternalActor, id: string, now: Date): Promise<AppContact> {
  requireRole(actor, 'owner', 'admin');
  return transact(db, async (tx) => {
    const [row] = await tx.run(q.LOCK_ANY, { id, orgId: actor.orgId });
    if (!row) throw contactErrors.notFound(id);
    if (!row.deleted_at) throw contactErrors.notInTrash(id);
    if (new Date(row.deleted_at) < trashCutoff(now)) throw contactErrors.restoreExpired(iso(row.deleted_at));
    if (row.email) await assertEmailFree(tx, actor.orgId, row.email, id);
    const [org] = await tx.run(LOCK_CONTACT_COUNT, { orgId: actor.orgId });
    if ((org?.contact_count ?? 0) >= contactCap(actor.plan, actor.contactBooster)) throw errors.contactLimitReached();
    await guardEmail(() => tx.run(q.UNTRASH, { now, id }));
    await tx.run(BUMP_CONTACT_COUNT, { by: 1, orgId: actor.orgId });
    const restored = { ...row, deleted_at: null, updated_at: now };
    await emitEvents(tx, [
      { orgId: actor.orgId, event: 'contact.created', source: 'app', data: { contact: toEventContact(restored), restored: true }, at: now },
    ]);
    return loadContact(tx, actor.orgId, id);
  });
}

/** Contacts purged per transaction: small enough that a backlog never holds locks for long. */
const PURGE_SLICE = 500;

const PICK_EXPIRED = statement<{ cutoff: Date }>()((p) =>
  qb
    .selectFrom('contacts')
    .select('id')
    .where('deleted_at', '<', p.cutoff)
    .orderBy('deleted_at')
    .orderBy('id')
    .limit(sql.lit(PURGE_SLICE))
    .forUpdate()
    .skipLocked(),
);
const ids = (json: unknown) => sql<string>`(select jsonb_array_elements_text(${json}::jsonb)::uuid)`;
const COUNT = sql<number>`count(*)::int`.as('n');
const FILE_KEYS = statement<{ ids: string }>()((p) =>
  qb.selectFrom('contact_files').select('storage_key').where('contact_id', 'in', ids(p.ids)),
);
/**
 * Undelivered events about a purged contact are dropped (nobody should be told about a record that no longer exists);
 * dispatched ones stay as the record of what receivers were sent. Only queued events are looked at.
 */
const DROP_PENDING_EVENTS = statement<{ ids: string }>()((p) =>
  qb
    .with('gone', (db) =>
      db
        .deleteFrom('outbox_events as o')
        .using('outbox_pending as q')
        .whereRef('o.id', '=', 'q.event_id')
        .where(
          (eb) =>
            sql<boolean>`(${eb.ref('o.payload')}->'data'->'contact'->>'id')::text in (select jsonb_array_elements_text(${p.ids}::jsonb))`,
        )
        .returning(['o.id', 'q.created_at']),
    )
    // By the queue's primary key, (created_at, event_id).
    .with('unqueued', (db) =>
      db
        .deleteFrom('outbox_pending')
        .where((eb) =>
          eb(eb.refTuple('created_at', 'event_id'), 'in', db.selectFrom('gone').select(['created_at', 'id']).$asTuple('created_at', 'id')),
        ),
    )
    .selectFrom('gone')
    .select(COUNT),
);
/** Notes, deals, tasks, conversations and messages, bookings, files, placements, AI actions and runs go by cascade. */
const DELETE_CONTACTS = statement<{ ids: string }>()((p) =>
  qb
    .with('gone', (db) => db.deleteFrom('contacts').where('id', 'in', ids(p.ids)).returning(sql.lit(1).as('one')))
    .selectFrom('gone')
    .select(COUNT),
);

export interface PurgeResult {
  contacts: number;
  events: number;
  /** Storage keys of the purged contacts' files: their rows are gone, the bytes are for the storage backend to delete. */
  storageKeys: string[];
}

/**
 * Deletes for good every contact more than 30 days in trash as of `now`, across all organizations, with its timeline.
 * Rows a concurrent restore holds are skipped (and that restore then finds the window closed, or wins).
 */
export async function purgeTrash(db: Db, now: Date): Promise<PurgeResult> {
  const result: PurgeResult = { contacts: 0, events: 0, storageKeys: [] };
  const cutoff = trashCutoff(now);
  for (;;) {
    const slice = await db.transaction(async (tx) => {
      const picked = (await tx.run(PICK_EXPIRED, { cutoff })).map((r) => r.id);
      if (picked.length === 0) return { picked: 0, contacts: 0, events: 0, keys: [] };
      const json = JSON.stringify(picked);
      const keys = await tx.run(FILE_KEYS, { ids: json });
      const [events] = await tx.run(DROP_PENDING_EVENTS, { ids: json });
      const [deleted] = await tx.run(DELETE_CONTACTS, { ids: json });
      return { picked: picked.length, contacts: deleted?.n ?? 0, events: events?.n ?? 0, keys: keys.map((k) => k.storage_key) };
    });
    // Counted only once the slice committed.
    result.contacts += slice.contacts;
    result.events += slice.events;
    result.storageKeys.push(...slice.keys);
    if (slice.picked < PURGE_SLICE) return result;
  }
}
