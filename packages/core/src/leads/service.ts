import { randomUUID } from 'node:crypto';
import { type Db, qb, sql, statement } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import type { EnvelopeRow } from '../auth/envelope-sql.ts';
import { AppError, errors } from '../errors.ts';
import { type UpsertOneParams, contactArguments } from '../contacts/v1/one-trip-sql.ts';
import { fitsOneTrip, oneTripParams, runOneTrip } from '../contacts/v1/one-trip.ts';
import type { UpsertOptions } from '../contacts/v1/options.ts';
import { upsertContactsInTx } from '../contacts/v1/upsert.ts';
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

type LeadRow = EnvelopeRow & {
  far: boolean | null;
  company_missing: boolean | null;
  id: string | null;
  created: boolean | null;
  pipeline_item_id: string | null;
  warning: LeadOutput['warning'];
};

/**
 * A lead by email in one call of `leadwire_v1_leads_create` (Migration20261128150000): the contact as the single
 * upsert writes it, then its placement, in one round trip and one transaction.
 */
export const CREATE_LEAD = statement<UpsertOneParams & { pipeline: string | null; itemId: string }>()((p) =>
  qb
    .selectFrom(sql<LeadRow>`leadwire_v1_leads_create(${contactArguments(p)}, ${p.pipeline}::text, ${p.itemId}::uuid)`.as('r'))
    .select([
      'r.key_ok',
      'r.hits',
      'r.locked',
      'r.prior_hash',
      'r.prior_response',
      'r.far',
      'r.company_missing',
      'r.id',
      'r.created',
      'r.pipeline_item_id',
      'r.warning',
    ]),
);

/** Lead rules 1-3 in a transaction: upsert the contact, then place it on the first stage of the pipeline. */
async function createLeadInTx(tx: Db, actor: Actor, input: LeadInput, opts: UpsertOptions): Promise<LeadOutput> {
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
}

/**
 * Lead rules 1-3: the contact is created or updated, then placed on the first stage of the pipeline, all or nothing.
 * On /v1 (`opts.envelope`) a lead by email is one round trip; any other runs in a transaction of its own.
 */
export async function createLead(db: Db, actor: Actor, input: LeadInput, opts: UpsertOptions): Promise<LeadOutput> {
  const { envelope } = opts;
  if (envelope && fitsOneTrip(input, opts)) {
    const params = { ...oneTripParams(actor, input, opts, envelope), pipeline: input.pipeline ?? null, itemId: randomUUID() };
    const run = await runOneTrip(db, CREATE_LEAD, params, envelope);
    // A stored answer is the one this route stored: the same operation's answer.
    if ('replay' in run) return run.replay as LeadOutput;
    if (run.row) return { id: run.row.id, created: run.row.created, pipelineItemId: run.row.pipeline_item_id, warning: run.row.warning };
  }
  try {
    const work = (tx: Db) => createLeadInTx(tx, actor, input, opts);
    return await (envelope ? envelope.classic(db, work) : db.transaction(work));
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw errors.saveFailed(err);
  }
}
