import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import { emitEvents, type PendingEvent } from '../../events/outbox.ts';
import { scoreInputsChanged } from '../shared/apply.ts';
import { changeEvents } from './apply.ts';
import { contactErrors } from './errors.ts';
import { mergeFields } from './merge-fields.ts';
import * as q from './merge-sql.ts';
import type { ContactMergeInput, ContactMergeOutput } from './schemas.ts';
import { loadContact, type WriteHooks, writeContact } from './write.ts';
import { toEventContact } from '../shared/row.ts';
import { BUMP_CONTACT_COUNT } from '../shared/sql.ts';
import { transact } from '../shared/transact.ts';

/** Rows merely re-pointed at the primary. */
const SIMPLE_MOVES = {
  notes: 'notes',
  deals: 'deals',
  tasks: 'tasks',
  bookings: 'bookings',
  workflowRuns: 'workflow_runs',
  files: 'contact_files',
  aiActions: 'ai_actions',
  formSubmissions: 'form_submissions',
} as const;

/**
 * Moved like the simple ones, but not reported in `moved`: the tracking snippet's page views, custom events and
 * visitors, tracked links, and consent entries (the evidence stays with the person; the primary's own consent flags
 * are not recomputed).
 */
const UNCOUNTED_MOVES = ['page_views', 'tracking_events', 'tracking_visitors', 'tracked_links', 'consent_entries'] as const;

/**
 * Every table that references contacts, and so would lose rows when a duplicate is deleted. A test compares this with
 * the database's foreign keys: a new table must be added here (moved, or knowingly left to cascade) before it ships.
 */
export const MERGE_HANDLED_TABLES = [...Object.values(SIMPLE_MOVES), 'pipeline_items', 'conversations', 'messages', ...UNCOUNTED_MOVES];

type Moved = ContactMergeOutput['moved'];

const COUNTED = Object.entries(SIMPLE_MOVES).map(([key, table]) => [key as keyof typeof SIMPLE_MOVES, q.move(table)] as const);
const UNCOUNTED = UNCOUNTED_MOVES.map((table) => q.move(table));
/** The duplicates' remaining messages: those already in a target conversation, and any outside a conversation of theirs. */
const MOVE_STRAY_MESSAGES = q.move('messages');

async function moveRecords(tx: Db, orgId: string, primaryId: string, dupIds: string[]) {
  const dups = JSON.stringify(dupIds);
  const all = JSON.stringify([primaryId, ...dupIds]);
  const count = async (rows: Promise<{ n: number }[]>) => (await rows)[0]?.n ?? 0;
  const moved = {} as Moved;
  await tx.run(q.DEMOTE_PHOTOS, { orgId, dups, primaryId });
  for (const [key, stmt] of COUNTED) moved[key] = await count(tx.run(stmt, { primaryId, orgId, dups }));
  const items = await count(tx.run(q.COUNT_ITEMS, { orgId, dups }));
  moved.pipelineItems = await count(tx.run(q.MOVE_ITEMS, { orgId, dups, primaryId }));
  moved.messages = await count(tx.run(q.MOVE_MESSAGES, { orgId, all, primaryId }));
  moved.conversations = await count(tx.run(q.MOVE_CONVERSATIONS, { orgId, all, primaryId }));
  moved.messages += await count(tx.run(MOVE_STRAY_MESSAGES, { primaryId, orgId, dups }));
  await tx.run(q.REFRESH_LAST_MESSAGE, { primaryId, orgId });
  for (const stmt of UNCOUNTED) await tx.run(stmt, { primaryId, orgId, dups });
  return { moved, skippedPipelineItems: items - moved.pipelineItems };
}

/**
 * Merges duplicates into a primary in one transaction, all or nothing (spec "Contact merge"; cannot be undone, so it
 * takes the owner or admin role, like restore). Every contact involved is locked in id order first, so two merges
 * over overlapping contacts queue instead of deadlocking; an unknown, foreign or trashed id refuses the whole merge.
 * Emits `contact.updated` for the primary (with `mergedIds`), `contact.tag_added` per tag it gained from a duplicate,
 * `contact.score_changed` if its score moved, and one `contact.deleted` per duplicate (with `mergedInto`).
 */
export async function mergeContacts(
  db: Db,
  actor: InternalActor,
  input: ContactMergeInput,
  now: Date,
  hooks: WriteHooks = {},
): Promise<ContactMergeOutput> {
  requireRole(actor, 'owner', 'admin');
  const { primaryId, secondaryIds } = input;
  return transact(db, async (tx) => {
    const ids = [primaryId, ...secondaryIds];
    const rows = await tx.run(q.LOCK, { orgId: actor.orgId, ids: JSON.stringify(ids) });
    const byId = new Map(rows.map((r) => [r.id, r]));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length) throw contactErrors.mergeNotFound(missing);
    const primary = byId.get(primaryId)!;
    const dups = secondaryIds.map((id) => byId.get(id)!);

    const { moved, skippedPipelineItems } = await moveRecords(tx, actor.orgId, primaryId, secondaryIds);
    await tx.run(q.DELETE_DUPLICATES, { orgId: actor.orgId, dups: JSON.stringify(secondaryIds) });
    await tx.run(BUMP_CONTACT_COUNT, { by: -dups.length, orgId: actor.orgId });
    // Only now is a duplicate's email free for the primary to take.
    const merged = mergeFields(primary, dups, now);
    await writeContact(tx, primary, merged);

    const events: PendingEvent[] = changeEvents(primary, merged, now, { extra: { mergedIds: secondaryIds }, tagEvents: true });
    if (events.length === 0) {
      events.push({
        orgId: actor.orgId,
        event: 'contact.updated',
        source: 'app',
        data: { contact: toEventContact(merged), mergedIds: secondaryIds },
        at: now,
      });
    }
    for (const d of dups) {
      events.push({
        orgId: actor.orgId,
        event: 'contact.deleted',
        source: 'app',
        data: { contact: toEventContact(d), mergedInto: primaryId },
        at: now,
      });
    }
    await emitEvents(tx, events);
    if (scoreInputsChanged(primary, merged)) await hooks.onScoreInputsChanged?.(tx, [primaryId]);
    return { contact: await loadContact(tx, actor.orgId, primaryId), mergedIds: secondaryIds, moved, skippedPipelineItems };
  });
}
