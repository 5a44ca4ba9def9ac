import { type DB, type ExpressionBuilder, qb, sql, statement } from '@leadwire/db';
import type { StageView } from './schemas.ts';

/** An organization's pipelines with their stages in board order; `id` null for all of them. */
export const SELECT_PIPELINES = statement<{ orgId: string; id: string | null }>()((p) =>
  qb
    .selectFrom('pipelines as p')
    .select((eb) => [
      'p.id',
      'p.name',
      'p.is_default',
      'p.created_at',
      sql<StageView[]>`coalesce(${eb
        .selectFrom('pipeline_stages as s')
        .select((s) =>
          sql`json_agg(json_build_object('id', ${s.ref('s.id')}, 'name', ${s.ref('s.name')}, 'position', ${s.ref('s.position')}) order by ${s.ref('s.position')})`.as(
            'agg',
          ),
        )
        .whereRef('s.pipeline_id', '=', 'p.id')}, '[]')`.as('stages'),
    ])
    .where('p.organization_id', '=', p.orgId)
    .where((eb) => eb.or([eb(sql`${p.id}::uuid`, 'is', null), eb('p.id', '=', p.id)]))
    .orderBy('p.is_default', 'desc')
    .orderBy('p.created_at')
    .orderBy('p.id'),
);
export type PipelineRow = NonNullable<(typeof SELECT_PIPELINES)['row']>;

/**
 * Every change to an organization's pipelines takes this lock first, so name checks, the one-default rule and stage
 * positions are decided one change at a time. Deal writes do not take it; they share-lock the pipeline row instead.
 */
export const LOCK_ORG_PIPELINES = statement<{ orgId: string }>()((p) =>
  qb.selectNoFrom(sql<unknown>`pg_advisory_xact_lock(hashtextextended('pipelines:' || ${p.orgId}, 0))`.as('locked')),
);

export const LOCK_PIPELINE = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('pipelines').select(['id', 'name', 'is_default']).where('id', '=', p.id).where('organization_id', '=', p.orgId).forUpdate(),
);
export type LockedPipeline = NonNullable<(typeof LOCK_PIPELINE)['row']>;

export const NAME_TAKEN = statement<{ orgId: string; name: string; exceptId: string }>()((p) =>
  qb
    .selectFrom('pipelines')
    .select(sql<number>`1`.as('taken'))
    .where('organization_id', '=', p.orgId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', eb.fn('lower', [eb.val(p.name)])))
    .where('id', '<>', p.exceptId),
);

export const HAS_DEFAULT = statement<{ orgId: string }>()((p) =>
  qb
    .selectFrom('pipelines')
    .select(sql<number>`1`.as('found'))
    .where('organization_id', '=', p.orgId)
    .where('is_default', '=', sql.lit(true)),
);

// Two statements, cleared before set: the partial unique index `pipelines_one_default` is checked row by row.
export const CLEAR_DEFAULT = statement<{ orgId: string; exceptId: string }>()((p) =>
  qb
    .updateTable('pipelines')
    .set({ is_default: false })
    .where('organization_id', '=', p.orgId)
    .where('is_default', '=', sql.lit(true))
    .where('id', '<>', p.exceptId),
);
export const SET_DEFAULT = statement<{ id: string }>()((p) => qb.updateTable('pipelines').set({ is_default: true }).where('id', '=', p.id));

export const INSERT_PIPELINE = statement<{ id: string; orgId: string; name: string; isDefault: boolean; now: Date }>()((p) =>
  qb.insertInto('pipelines').values({ id: p.id, organization_id: p.orgId, name: p.name, is_default: p.isDefault, created_at: p.now }),
);

/** `names`: a JSON array of stage names, placed at positions 0..n-1 in that order. */
export const INSERT_STAGES = statement<{ orgId: string; pipelineId: string; names: string }>()((p) =>
  qb
    .insertInto('pipeline_stages')
    .columns(['id', 'organization_id', 'pipeline_id', 'name', 'position'])
    .expression(
      qb
        .selectFrom(sql<{ value: string; ordinality: number }>`jsonb_array_elements_text(${p.names}::jsonb) with ordinality`.as('v'))
        .select((eb) => [
          sql<string>`gen_random_uuid()`.as('id'),
          eb.val(p.orgId).as('organization_id'),
          eb.val(p.pipelineId).as('pipeline_id'),
          'v.value as name',
          sql<number>`${eb.ref('v.ordinality')} - 1`.as('position'),
        ]),
    ),
);

export const INSERT_STAGE = statement<{ id: string; orgId: string; pipelineId: string; name: string; position: number }>()((p) =>
  qb
    .insertInto('pipeline_stages')
    .values({ id: p.id, organization_id: p.orgId, pipeline_id: p.pipelineId, name: p.name, position: p.position }),
);

export const PROMOTE_OLDEST = statement<{ orgId: string }>()((p) =>
  qb
    .updateTable('pipelines')
    .set({ is_default: true })
    .where('id', '=', (eb) =>
      eb.selectFrom('pipelines').select('id').where('organization_id', '=', p.orgId).orderBy('created_at').orderBy('id').limit(sql.lit(1)),
    ),
);

export const RENAME_PIPELINE = statement<{ id: string; name: string }>()((p) =>
  qb.updateTable('pipelines').set({ name: p.name }).where('id', '=', p.id),
);
export const DELETE_PIPELINE = statement<{ id: string }>()((p) => qb.deleteFrom('pipelines').where('id', '=', p.id));

export const STAGES = statement<{ pipelineId: string }>()((p) =>
  qb.selectFrom('pipeline_stages').select(['id', 'name', 'position']).where('pipeline_id', '=', p.pipelineId).orderBy('position'),
);

export const RENAME_STAGE = statement<{ id: string; name: string }>()((p) =>
  qb.updateTable('pipeline_stages').set({ name: p.name }).where('id', '=', p.id),
);
export const DELETE_STAGE = statement<{ id: string }>()((p) => qb.deleteFrom('pipeline_stages').where('id', '=', p.id));

/** Deals on the pipeline, or only on one of its stages when `stageId` is given. */
export const DEALS_ON = statement<{ pipelineId: string; stageId: string | null }>()((p) =>
  qb
    .selectFrom('deals')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('pipeline_id', '=', p.pipelineId)
    .where((eb) => eb.or([eb(sql`${p.stageId}::uuid`, 'is', null), eb('stage_id', '=', p.stageId)])),
);

export const PLACEMENTS_ON_STAGE = statement<{ stageId: string }>()((p) =>
  qb.selectFrom('pipeline_items').select(sql<number>`count(*)::int`.as('n')).where('stage_id', '=', p.stageId),
);

export const MOVE_PLACEMENTS = statement<{ from: string; to: string }>()((p) =>
  qb.updateTable('pipeline_items').set({ stage_id: p.to }).where('stage_id', '=', p.from),
);

// Positions are unique per pipeline and checked row by row, so a new order goes through negative values first.
export const PARK_POSITIONS = statement<{ pipelineId: string }>()((p) =>
  qb
    .updateTable('pipeline_stages')
    .set((eb) => ({ position: sql<number>`-1 - ${eb.ref('position')}` }))
    .where('pipeline_id', '=', p.pipelineId),
);

/** `ids`: a JSON array of every stage id of the pipeline, in the new order. */
export const APPLY_ORDER = statement<{ ids: string; pipelineId: string }>()((p) =>
  qb
    .updateTable('pipeline_stages as s')
    .from(sql<{ value: string; ordinality: number }>`jsonb_array_elements_text(${p.ids}::jsonb) with ordinality`.as('v'))
    .set((eb) => ({ position: sql<number>`${eb.ref('v.ordinality')} - 1` }))
    .where((eb) => eb('s.id', '=', sql<string>`${eb.ref('v.value')}::uuid`))
    .where('s.pipeline_id', '=', p.pipelineId),
);

/**
 * Places a contact on a stage, or answers the placement it already has on that pipeline (lead rule 2, and form intake):
 * the unique (pipeline, contact) key makes a second placement a no-op under concurrency.
 */
export const PLACE_CONTACT = statement<{ id: string; orgId: string; pipelineId: string; stageId: string; contactId: string }>()((p) =>
  qb
    .with('ins', (db) =>
      db
        .insertInto('pipeline_items')
        .values({ id: p.id, organization_id: p.orgId, pipeline_id: p.pipelineId, stage_id: p.stageId, contact_id: p.contactId })
        .onConflict((oc) => oc.columns(['pipeline_id', 'contact_id']).doNothing())
        .returning('id'),
    )
    .selectFrom('ins')
    .select('id')
    .unionAll((db) =>
      db.selectFrom('pipeline_items').select('id').where('pipeline_id', '=', p.pipelineId).where('contact_id', '=', p.contactId),
    )
    .limit(sql.lit(1)),
);

/** The first stage (by position) of the pipeline aliased `p`: where a new placement lands. */
export const firstStageId = (eb: ExpressionBuilder<DB & { p: DB['pipelines'] }, 'p'>) =>
  eb
    .selectFrom('pipeline_stages as s')
    .select('s.id')
    .whereRef('s.pipeline_id', '=', 'p.id')
    .orderBy('s.position')
    .orderBy('s.id')
    .limit(sql.lit(1));
