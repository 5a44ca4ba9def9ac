import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import { errors } from '../../errors.ts';
import { emitEvents } from '../../events/outbox.ts';
import { contactCap } from '../../limits/plans.ts';
import { contactErrors } from './errors.ts';
import { type AppContactRow, iso, purgeAfter, trashCutoff } from './row.ts';
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
    const [row] = await tx.execute<AppContactRow[]>(q.LOCK_LIVE, [id, actor.orgId]);
    if (!row) throw contactErrors.notFound(id);
    await tx.execute(q.TRASH, [now, now, id]);
    // Trashed contacts do not count against the plan cap; a restore counts it again.
    await tx.execute(BUMP_CONTACT_COUNT, [-1, actor.orgId]);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'contact.deleted', source: 'app', data: { contact: toEventContact(row) }, at: now }]);
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
    const [row] = await tx.execute<AppContactRow[]>(q.LOCK_ANY, [id, actor.orgId]);
    if (!row) throw contactErrors.notFound(id);
    if (!row.deleted_at) throw contactErrors.notInTrash(id);
    if (new Date(row.deleted_at) < trashCutoff(now)) throw contactErrors.restoreExpired(iso(row.deleted_at));
    if (row.email) await assertEmailFree(tx, actor.orgId, row.email, id);
    const [org] = await tx.execute<{ contact_count: number }[]>(LOCK_CONTACT_COUNT, [actor.orgId]);
    if ((org?.contact_count ?? 0) >= contactCap(actor.plan, actor.contactBooster)) throw errors.contactLimitReached();
    await guardEmail(() => tx.execute(q.UNTRASH, [now, id]));
    await tx.execute(BUMP_CONTACT_COUNT, [1, actor.orgId]);
    const restored = { ...row, deleted_at: null, updated_at: now };
    await emitEvents(tx, [
      { orgId: actor.orgId, event: 'contact.created', source: 'app', data: { contact: toEventContact(restored), restored: true }, at: now },
    ]);
    return loadContact(tx, actor.orgId, id);
  });
}

/** Contacts purged per transaction: small enough that a backlog never holds locks for long. */
const PURGE_SLICE = 500;

const PICK_EXPIRED = `
select id from contacts where deleted_at < ? order by deleted_at, id limit ${PURGE_SLICE} for update skip locked`;
const IDS = `(select jsonb_array_elements_text(?::jsonb)::uuid)`;
const FILE_KEYS = `select storage_key from contact_files where contact_id in ${IDS}`;
/**
 * Undelivered events about a purged contact are dropped (nobody should be told about a record that no longer exists);
 * dispatched ones stay as the record of what receivers were sent. Only queued events are looked at.
 */
const DROP_PENDING_EVENTS = `
with gone as (
  delete from outbox_events o using outbox_pending q
  where o.id = q.event_id and (o.payload->'data'->'contact'->>'id')::text in (select jsonb_array_elements_text(?::jsonb))
  returning o.id
), unqueued as (
  delete from outbox_pending where event_id in (select id from gone)
) select count(*)::int as n from gone`;
/** Notes, deals, tasks, conversations and messages, bookings, files, placements, AI actions and runs go by cascade. */
const DELETE_CONTACTS = `with gone as (delete from contacts where id in ${IDS} returning 1) select count(*)::int as n from gone`;

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
      const ids = (await tx.execute<{ id: string }[]>(PICK_EXPIRED, [cutoff])).map((r) => r.id);
      if (ids.length === 0) return { picked: 0, contacts: 0, events: 0, keys: [] };
      const json = JSON.stringify(ids);
      const keys = await tx.execute<{ storage_key: string }[]>(FILE_KEYS, [json]);
      const [events] = await tx.execute<{ n: number }[]>(DROP_PENDING_EVENTS, [json]);
      const [deleted] = await tx.execute<{ n: number }[]>(DELETE_CONTACTS, [json]);
      return { picked: ids.length, contacts: deleted?.n ?? 0, events: events?.n ?? 0, keys: keys.map((k) => k.storage_key) };
    });
    // Counted only once the slice committed.
    result.contacts += slice.contacts;
    result.events += slice.events;
    result.storageKeys.push(...slice.keys);
    if (slice.picked < PURGE_SLICE) return result;
  }
}
