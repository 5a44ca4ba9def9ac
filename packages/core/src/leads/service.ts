import { randomUUID } from 'node:crypto';
import { type Db, qb, sql, statement } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { errors } from '../errors.ts';
import { transact } from '../contacts/shared/transact.ts';
import { type UpsertOptions, upsertContactsInTx } from '../contacts/v1/upsert.ts';
import type { LeadInput, LeadOutput } from './schemas.ts';

/** The named pipeline (case-insensitive) or the default one, with its first stage if it has any. */
const FIND_PIPELINE = statement<{ orgId: string; name: string | null }>()((p) =>
  qb
    .selectFrom('pipelines as p')
    .select((eb) => [
      'p.id as pipeline_id',
      eb
        .selectFrom('pipeline_stages as s')
        .select('s.id')
        .whereRef('s.pipeline_id', '=', 'p.id')
        .orderBy('s.position')
        .orderBy('s.id')
        .limit(sql.lit(1))
        .as('stage_id'),
    ])
    .where('p.organization_id', '=', p.orgId)
    .where((eb) => sql<boolean>`(case when ${p.name}::text is null then ${eb.ref('p.is_default')} else lower(${eb.ref('p.name')}) = lower(${p.name}) end)`)
    .limit(sql.lit(1)),
);

/**
 * Lead rule 2: a contact already on the pipeline is skipped; the unique key makes that hold under concurrency. Form
 * intake places with it too. Answers the placement's id, new or existing.
 */
export const PLACE_ON_PIPELINE = statement<{ id: string; orgId: string; pipelineId: string; stageId: string; contactId: string }>()((p) =>
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
    .unionAll((db) => db.selectFrom('pipeline_items').select('id').where('pipeline_id', '=', p.pipelineId).where('contact_id', '=', p.contactId))
    .limit(sql.lit(1)),
);

/** PLACE_ON_PIPELINE as SQL text with `?` placeholders, for callers not yet on `Db.run`. Removed once none is left. */
export const PLACE = `
with ins as (
  insert into pipeline_items (id, organization_id, pipeline_id, stage_id, contact_id) values (?, ?, ?, ?, ?)
  on conflict (pipeline_id, contact_id) do nothing returning id
)
select id from ins union all select id from pipeline_items where pipeline_id = ? and contact_id = ? limit 1`;

/** Lead rules 1-3: upsert the contact, then place it on the first stage of the pipeline, in one transaction. */
export async function createLead(
  db: Db,
  actor: Actor,
  input: LeadInput,
  opts: UpsertOptions,
): Promise<LeadOutput> {
  return transact(db, async (tx) => {
    const [outcome] = await upsertContactsInTx(tx, actor, [input], opts);
    if (!outcome?.ok) throw outcome?.error ?? errors.saveFailed(new Error('no outcome'));
    const base = { id: outcome.id, created: outcome.created };
    const [pipeline] = await tx.run(FIND_PIPELINE, { orgId: actor.orgId, name: input.pipeline ?? null });
    if (!pipeline) return { ...base, pipelineItemId: null, warning: 'no_pipeline_found' };
    if (!pipeline.stage_id) return { ...base, pipelineItemId: null, warning: 'pipeline_has_no_stages' };
    const [item] = await tx.run(PLACE_ON_PIPELINE, {
      id: randomUUID(),
      orgId: actor.orgId,
      pipelineId: pipeline.pipeline_id,
      stageId: pipeline.stage_id,
      contactId: outcome.id,
    });
    return { ...base, pipelineItemId: item!.id, warning: null };
  });
}
