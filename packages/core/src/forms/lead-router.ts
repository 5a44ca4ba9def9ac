import type { Db } from '@leadwire/db';
import type { Answer, Attribution } from './answers.ts';
import { ROUTE_PIPELINE } from './sql.ts';

export interface LeadToRoute {
  orgId: string;
  /** The pipeline the form names; null when it names none (or it was deleted). */
  formPipelineId: string | null;
  answers: Record<string, Answer>;
  attribution: Attribution;
}

/** Where a lead goes: a pipeline and its first stage (null stage: the pipeline has none, so nothing is placed). */
export interface RouteTarget {
  pipelineId: string;
  stageId: string | null;
}

/** Picks the pipeline for a submission's contact, inside the submission's transaction; null places it nowhere. */
export type LeadRouter = (tx: Db, lead: LeadToRoute) => Promise<RouteTarget | null>;

/**
 * The rules router: the form's own pipeline, else the organization's default pipeline (spec, intake rule 3: "a form's
 * settings may name a pipeline; otherwise [a step] routes the lead"). No default pipeline: the contact is kept unplaced.
 */
export const defaultLeadRouter: LeadRouter = async (tx, lead) => {
  const [row] = await tx.execute<{ pipeline_id: string; stage_id: string | null }[]>(ROUTE_PIPELINE, [
    lead.orgId,
    lead.formPipelineId,
    lead.formPipelineId,
  ]);
  return row ? { pipelineId: row.pipeline_id, stageId: row.stage_id } : null;
};
