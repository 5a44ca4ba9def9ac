import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import { emitEvents, type PendingEvent } from '../../events/outbox.ts';
import { scoreInputsChanged } from '../shared/apply.ts';
import { changeEvents } from './apply.ts';
import { contactErrors } from './errors.ts';
import { mergeFields } from './merge-fields.ts';
import type { AppContactRow } from './row.ts';
import type { ContactMergeInput, ContactMergeOutput } from './schemas.ts';
import { loadContact, type WriteHooks, writeContact } from './write.ts';
import { toEventContact } from '../shared/row.ts';
import { CONTACT_COLUMNS } from '../shared/columns.ts';
import { BUMP_CONTACT_COUNT, HAS_BOOKING } from '../shared/sql.ts';
import { transact } from '../shared/transact.ts';

const IDS = `(select jsonb_array_elements_text(?::jsonb)::uuid)`;

/** Rows merely re-pointed at the primary. Table names are constants, never input. */
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

/** Moved like the simple ones, but not reported in `moved`: the tracking snippet's page views and visitors, tracked links. */
const UNCOUNTED_MOVES = ['page_views', 'tracking_visitors', 'tracked_links'];

/**
 * Every table that references contacts, and so would lose rows when a duplicate is deleted. A test compares this with
 * the database's foreign keys: a new table must be added here (moved, or knowingly left to cascade) before it ships.
 */
export const MERGE_HANDLED_TABLES = [...Object.values(SIMPLE_MOVES), 'pipeline_items', 'conversations', 'messages', ...UNCOUNTED_MOVES];

const LOCK = `
select ${CONTACT_COLUMNS}, ${HAS_BOOKING} from contacts c
where c.organization_id = ? and c.id in ${IDS} and c.deleted_at is null order by c.id for update of c`;

const move = (table: string) => `
with m as (update ${table} set contact_id = ? where organization_id = ? and contact_id in ${IDS} returning 1)
select count(*)::int as n from m`;

const COUNT_ITEMS = `select count(*)::int as n from pipeline_items where organization_id = ? and contact_id in ${IDS}`;

/** One placement per pipeline: the primary's if it has one, else the oldest among the duplicates'; the rest cascade. */
const MOVE_ITEMS = `
with keep as (
  select distinct on (pi.pipeline_id) pi.id from pipeline_items pi
  where pi.organization_id = ? and pi.contact_id in ${IDS}
    and not exists (select 1 from pipeline_items p where p.contact_id = ? and p.pipeline_id = pi.pipeline_id)
  order by pi.pipeline_id, pi.created_at, pi.id
), m as (update pipeline_items set contact_id = ? where id in (select id from keep) returning 1)
select count(*)::int as n from m`;

/**
 * One conversation per contact and channel (a unique index): per channel the primary's conversation, else the oldest
 * duplicate one, becomes the target; messages of the other conversations move into it. Emptied conversations cascade.
 */
const TARGETS = `
convs as (select id, contact_id, channel, created_at from conversations where organization_id = ? and contact_id in ${IDS}),
target as (select distinct on (channel) channel, id, contact_id from convs order by channel, (contact_id = ?) desc, created_at, id)`;

const MOVE_MESSAGES = `
with ${TARGETS},
m as (
  update messages msg set conversation_id = t.id, contact_id = ?
  from convs c join target t on t.channel = c.channel
  where msg.conversation_id = c.id and c.id <> t.id
  returning 1
) select count(*)::int as n from m`;

const MOVE_CONVERSATIONS = `
with ${TARGETS},
m as (
  update conversations c set contact_id = ?
  from target t where c.id = t.id and t.contact_id <> ?
  returning 1
) select count(*)::int as n from m`;

/** The duplicates' remaining messages: those already in a target conversation, and any outside a conversation of theirs. */
const MOVE_STRAY_MESSAGES = move('messages');

const REFRESH_LAST_MESSAGE = `
update conversations c set last_message_at = greatest(c.last_message_at, (select max(created_at) from messages where conversation_id = c.id))
where c.contact_id = ? and c.organization_id = ?`;

const DELETE_DUPLICATES = `delete from contacts where organization_id = ? and id in ${IDS}`;

type Moved = ContactMergeOutput['moved'];

async function count(tx: Db, sql: string, params: unknown[]): Promise<number> {
  const [row] = await tx.execute<{ n: number }[]>(sql, params);
  return row?.n ?? 0;
}

/**
 * A contact has one photo, and like any field the primary's wins: the duplicates' photos become plain files of the
 * primary, except the newest one when the primary has none. No image is lost.
 */
const DEMOTE_PHOTOS = `
update contact_files f set kind = 'file'
where f.organization_id = ? and f.kind = 'photo' and f.contact_id in ${IDS}
  and (exists (select 1 from contact_files p where p.contact_id = ? and p.kind = 'photo')
    or f.id <> (select d.id from contact_files d where d.organization_id = f.organization_id and d.kind = 'photo'
      and d.contact_id in ${IDS} order by d.created_at desc, d.id limit 1))`;

async function moveRecords(tx: Db, orgId: string, primaryId: string, dupIds: string[]) {
  const dups = JSON.stringify(dupIds);
  const all = JSON.stringify([primaryId, ...dupIds]);
  const moved = {} as Moved;
  await tx.execute(DEMOTE_PHOTOS, [orgId, dups, primaryId, dups]);
  for (const [key, table] of Object.entries(SIMPLE_MOVES) as [keyof typeof SIMPLE_MOVES, string][]) {
    moved[key] = await count(tx, move(table), [primaryId, orgId, dups]);
  }
  const items = await count(tx, COUNT_ITEMS, [orgId, dups]);
  moved.pipelineItems = await count(tx, MOVE_ITEMS, [orgId, dups, primaryId, primaryId]);
  moved.messages = await count(tx, MOVE_MESSAGES, [orgId, all, primaryId, primaryId]);
  moved.conversations = await count(tx, MOVE_CONVERSATIONS, [orgId, all, primaryId, primaryId, primaryId]);
  moved.messages += await count(tx, MOVE_STRAY_MESSAGES, [primaryId, orgId, dups]);
  await tx.execute(REFRESH_LAST_MESSAGE, [primaryId, orgId]);
  for (const table of UNCOUNTED_MOVES) await tx.execute(move(table), [primaryId, orgId, dups]);
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
    const rows = await tx.execute<AppContactRow[]>(LOCK, [actor.orgId, JSON.stringify(ids)]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length) throw contactErrors.mergeNotFound(missing);
    const primary = byId.get(primaryId)!;
    const dups = secondaryIds.map((id) => byId.get(id)!);

    const { moved, skippedPipelineItems } = await moveRecords(tx, actor.orgId, primaryId, secondaryIds);
    await tx.execute(DELETE_DUPLICATES, [actor.orgId, JSON.stringify(secondaryIds)]);
    await tx.execute(BUMP_CONTACT_COUNT, [-dups.length, actor.orgId]);
    // Only now is a duplicate's email free for the primary to take.
    const merged = mergeFields(primary, dups, now);
    await writeContact(tx, primary, merged);

    const events: PendingEvent[] = changeEvents(primary, merged, now, { extra: { mergedIds: secondaryIds }, tagEvents: true });
    if (events.length === 0) {
      events.push({ orgId: actor.orgId, event: 'contact.updated', source: 'app', data: { contact: toEventContact(merged), mergedIds: secondaryIds }, at: now });
    }
    for (const d of dups) {
      events.push({ orgId: actor.orgId, event: 'contact.deleted', source: 'app', data: { contact: toEventContact(d), mergedInto: primaryId }, at: now });
    }
    await emitEvents(tx, events);
    if (scoreInputsChanged(primary, merged)) await hooks.onScoreInputsChanged?.(tx, [primaryId]);
    return { contact: await loadContact(tx, actor.orgId, primaryId), mergedIds: secondaryIds, moved, skippedPipelineItems };
  });
}
