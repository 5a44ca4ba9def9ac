import { randomUUID } from 'node:crypto';
import { type Db, qb, sql, statement } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { errors } from '../errors.ts';
import { transact } from '../contacts/shared/transact.ts';
import { type UpsertOptions, upsertContactsInTx } from '../contacts/v1/upsert.ts';
import { firstStageId, PLACE_CONTACT } from '../pipelines/sql.ts';
import type { LeadInput, LeadOutput } from './schemas.ts';

/** The named pipeline (case-insensitive) or the default one, with its first stage if it has any. */
const FIND_PIPELINE = statement<{ orgId: string; name: string | null }>()((p) =>
  qb
    .selectFrom('pipelines as p')
    .select((eb) => ['p.id as pipeline_id', firstStageId(eb).as('stage_id')])
    .where('p.organization_id', '=', p.orgId)
    .where(
      (eb) =>
        sql<boolean>`(case when ${p.name}::text is null then ${eb.ref('p.is_default')} else lower(${eb.ref('p.name')}) = lower(${p.name}) end)`,
    )
    .limit(sql.lit(1)),
);

/** Lead rules 1-3: upsert the contact, then place it on the first stage of the pipeline, in one transaction. */
export async function createLead(db: Db, actor: Actor, input: LeadInput, opts: UpsertOptions): Promise<LeadOutput> {
  return transact(db, async (tx) => {
    const [outcome] = await upsertContactsInTx(tx, actor, [input], opts);
    if (!outcome?.ok) throw outcome?.error ?? errors.saveFailed(new Error('no outcome'));
    const base = { id: outcome.id, created: outcome.created };
    const [pipeline] = await tx.run(FIND_PIPELINE, { orgId: actor.orgId, name: input.pipeline ?? null });
    if (!pipeline) return { ...base, pipelineItemId: null, warning: 'no_pipeline_found' };
    if (!pipeline.stage_id) return { ...base, pipelineItemId: null, warning: 'pipeline_has_no_stages' };
    const [item] = await tx.run(PLACE_CONTACT, {
      id: randomUUID(),
      orgId: actor.orgId,
      pipelineId: pipeline.pipeline_id,
      stageId: pipeline.stage_id,
      contactId: outcome.id,
    });
    return { ...base, pipelineItemId: item!.id, warning: null };
  });
}
