import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { errors } from '../errors.ts';
import { transact } from '../contacts/shared/transact.ts';
import { type UpsertOptions, upsertContactsInTx } from '../contacts/v1/upsert.ts';
import type { LeadInput, LeadOutput } from './schemas.ts';

/** The named pipeline (case-insensitive) or the default one, with its first stage if it has any. */
const FIND_PIPELINE = `
select p.id as pipeline_id,
  (select s.id from pipeline_stages s where s.pipeline_id = p.id order by s.position, s.id limit 1) as stage_id
from pipelines p
where p.organization_id = ? and (case when ?::text is null then p.is_default else lower(p.name) = lower(?) end)
limit 1`;

/** Lead rule 2: a contact already on the pipeline is skipped; the unique key makes that hold under concurrency. Form intake places with it too. */
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
    const pipelineName = input.pipeline ?? null;
    const [pipeline] = await tx.execute<{ pipeline_id: string; stage_id: string | null }[]>(FIND_PIPELINE, [
      actor.orgId,
      pipelineName,
      pipelineName,
    ]);
    if (!pipeline) return { ...base, pipelineItemId: null, warning: 'no_pipeline_found' };
    if (!pipeline.stage_id) return { ...base, pipelineItemId: null, warning: 'pipeline_has_no_stages' };
    const [item] = await tx.execute<{ id: string }[]>(PLACE, [
      randomUUID(),
      actor.orgId,
      pipeline.pipeline_id,
      pipeline.stage_id,
      outcome.id,
      pipeline.pipeline_id,
      outcome.id,
    ]);
    return { ...base, pipelineItemId: item!.id, warning: null };
  });
}
