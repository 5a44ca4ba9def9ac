import { qb, sql, statement } from '@leadwire/db';
import { SCORED_CONTACT } from '../shared/sql.ts';

/** Statements of the contact merge, each built once. Lists of ids travel as one JSON parameter. */

/** The ids of a JSON array, as a subquery for `in`. */
const ids = (json: unknown) => sql<string>`(select jsonb_array_elements_text(${json}::jsonb)::uuid)`;
const COUNT = sql<number>`count(*)::int`.as('n');
const ONE = sql.lit(1).as('one');

export const LOCK = statement<{ orgId: string; ids: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(SCORED_CONTACT)
    .where('c.organization_id', '=', p.orgId)
    .where('c.id', 'in', ids(p.ids))
    .where('c.deleted_at', 'is', null)
    .orderBy('c.id')
    .forUpdate('c'),
);

/** Tables whose rows are merely re-pointed at the primary. */
type Moved =
  | 'notes'
  | 'deals'
  | 'tasks'
  | 'bookings'
  | 'workflow_runs'
  | 'contact_files'
  | 'ai_actions'
  | 'form_submissions'
  | 'page_views'
  | 'tracking_events'
  | 'consent_entries'
  | 'tracking_visitors'
  | 'tracked_links'
  | 'messages';

interface MoveParams {
  primaryId: string;
  orgId: string;
  /** The duplicates' ids, as JSON. */
  dups: string;
}

/** Re-points a table's rows of the duplicates at the primary; answers how many moved. */
export const move = (table: Moved) =>
  statement<MoveParams>()((p) =>
    qb
      .with('m', (db) =>
        db
          .updateTable(table)
          .set({ contact_id: p.primaryId })
          .where('organization_id', '=', p.orgId)
          .where('contact_id', 'in', ids(p.dups))
          .returning(ONE),
      )
      .selectFrom('m')
      .select(COUNT),
  );

export const COUNT_ITEMS = statement<{ orgId: string; dups: string }>()((p) =>
  qb.selectFrom('pipeline_items').select(COUNT).where('organization_id', '=', p.orgId).where('contact_id', 'in', ids(p.dups)),
);

/** One placement per pipeline: the primary's if it has one, else the oldest among the duplicates'; the rest cascade. */
export const MOVE_ITEMS = statement<MoveParams>()((p) =>
  qb
    .with('keep', (db) =>
      db
        .selectFrom('pipeline_items as pi')
        .distinctOn('pi.pipeline_id')
        .select('pi.id')
        .where('pi.organization_id', '=', p.orgId)
        .where('pi.contact_id', 'in', ids(p.dups))
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('pipeline_items as p')
                .select(ONE)
                .where('p.contact_id', '=', p.primaryId)
                .whereRef('p.pipeline_id', '=', 'pi.pipeline_id'),
            ),
          ),
        )
        .orderBy('pi.pipeline_id')
        .orderBy('pi.created_at')
        .orderBy('pi.id'),
    )
    .with('m', (db) =>
      db
        .updateTable('pipeline_items')
        .set({ contact_id: p.primaryId })
        .where('id', 'in', db.selectFrom('keep').select('id'))
        .returning(ONE),
    )
    .selectFrom('m')
    .select(COUNT),
);

/**
 * One conversation per contact and channel (a unique index): per channel the primary's conversation, else the oldest
 * duplicate one, becomes the target; messages of the other conversations move into it. Emptied conversations cascade.
 * `all` is the primary's and the duplicates' ids, as JSON.
 */
const targets = (p: { orgId: string; all: string; primaryId: string }) =>
  qb
    .with('convs', (db) =>
      db
        .selectFrom('conversations')
        .select(['id', 'contact_id', 'channel', 'created_at'])
        .where('organization_id', '=', p.orgId)
        .where('contact_id', 'in', ids(p.all)),
    )
    .with('target', (db) =>
      db
        .selectFrom('convs')
        .distinctOn('channel')
        .select(['channel', 'id', 'contact_id'])
        .orderBy('channel')
        .orderBy((eb) => sql`(${eb.ref('contact_id')} = ${p.primaryId})`, 'desc')
        .orderBy('created_at')
        .orderBy('id'),
    );

export const MOVE_MESSAGES = statement<{ orgId: string; all: string; primaryId: string }>()((p) =>
  targets(p)
    .with('m', (db) =>
      db
        .updateTable('messages as msg')
        .from('convs as c')
        .innerJoin('target as t', 't.channel', 'c.channel')
        .set((eb) => ({ conversation_id: eb.ref('t.id'), contact_id: p.primaryId }))
        .whereRef('msg.conversation_id', '=', 'c.id')
        .whereRef('c.id', '<>', 't.id')
        .returning(ONE),
    )
    .selectFrom('m')
    .select(COUNT),
);

export const MOVE_CONVERSATIONS = statement<{ orgId: string; all: string; primaryId: string }>()((p) =>
  targets(p)
    .with('m', (db) =>
      db
        .updateTable('conversations as c')
        .from('target as t')
        .set({ contact_id: p.primaryId })
        .whereRef('c.id', '=', 't.id')
        .where('t.contact_id', '<>', p.primaryId)
        .returning(ONE),
    )
    .selectFrom('m')
    .select(COUNT),
);

export const REFRESH_LAST_MESSAGE = statement<{ primaryId: string; orgId: string }>()((p) =>
  qb
    .updateTable('conversations as c')
    .set((eb) => ({
      last_message_at: eb.fn('greatest', [
        'c.last_message_at',
        eb
          .selectFrom('messages')
          .select((m) => m.fn.max('messages.created_at').as('latest'))
          .whereRef('messages.conversation_id', '=', 'c.id'),
      ]),
    }))
    .where('c.contact_id', '=', p.primaryId)
    .where('c.organization_id', '=', p.orgId),
);

export const DELETE_DUPLICATES = statement<{ orgId: string; dups: string }>()((p) =>
  qb.deleteFrom('contacts').where('organization_id', '=', p.orgId).where('id', 'in', ids(p.dups)),
);

/**
 * A contact has one photo, and like any field the primary's wins: the duplicates' photos become plain files of the
 * primary, except the newest one when the primary has none. No image is lost.
 */
export const DEMOTE_PHOTOS = statement<{ orgId: string; dups: string; primaryId: string }>()((p) =>
  qb
    .updateTable('contact_files as f')
    .set({ kind: sql.lit('file') })
    .where('f.organization_id', '=', p.orgId)
    .where('f.kind', '=', sql.lit('photo'))
    .where('f.contact_id', 'in', ids(p.dups))
    .where((eb) =>
      eb.or([
        eb.exists(
          eb.selectFrom('contact_files as p').select(ONE).where('p.contact_id', '=', p.primaryId).where('p.kind', '=', sql.lit('photo')),
        ),
        eb(
          'f.id',
          '<>',
          eb
            .selectFrom('contact_files as d')
            .select('d.id')
            .whereRef('d.organization_id', '=', 'f.organization_id')
            .where('d.kind', '=', sql.lit('photo'))
            .where('d.contact_id', 'in', ids(p.dups))
            .orderBy('d.created_at', 'desc')
            .orderBy('d.id')
            .limit(sql.lit(1)),
        ),
      ]),
    ),
);
