import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import { generateToken, hashKey } from '../auth/key-material.ts';
import { iso } from '../records/dates.ts';
import { refuseForeignCursor, toPage } from '../records/pagination.ts';
import { errors } from '../errors.ts';
import type {
  WorkflowCreateInput,
  WorkflowListInput,
  WorkflowRunView,
  WorkflowUpdateInput,
  WorkflowView,
  WorkflowWithUrl,
} from './schemas.ts';
import type { StepDefinition } from './steps.ts';
import { checkReferences } from './references.ts';
import * as q from './sql.ts';

/** A run's steps as stored: each as the workflow had it, with its outcome once it ran (jsonb, written only here). */
export type RunStep = StepDefinition & { outcome?: WorkflowRunView['steps'][number]['outcome'] };
/** The steps of a workflow as stored (jsonb, written only by this service after checking them). */
export const stepsOf = (r: Pick<q.WorkflowRow, 'steps'>) => r.steps as StepDefinition[];
export const runStepsOf = (r: Pick<q.RunRow, 'steps'>) => r.steps as RunStep[];

/** `wfh_` and 256 random bits: the intake URL's only credential. */
export const TOKEN_PREFIX = 'wfh_';
/** Characters of the token kept to recognise it: the prefix and 6 of its 43 random ones (about 36 bits, no help to a guesser). */
const HINT_LENGTH = TOKEN_PREFIX.length + 6;

export const intakeUrl = (baseUrl: string, token: string) => `${baseUrl}/workflows/hooks/${token}`;

export function toWorkflowView(r: q.WorkflowRow, baseUrl: string): WorkflowView {
  return {
    id: r.id,
    name: r.name,
    trigger: r.trigger,
    steps: stepsOf(r).map((s) => ({ action: s.action, input: s.input })),
    enabled: r.enabled,
    intakeUrlHint: `${intakeUrl(baseUrl, r.token_prefix)}…`,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export function toRunView(r: q.RunRow): WorkflowRunView {
  return {
    id: r.id,
    workflowId: r.workflow_id,
    workflowName: r.workflow,
    contactId: r.contact_id,
    status: r.status,
    steps: runStepsOf(r).map((s) => ({ action: s.action, input: s.input, outcome: s.outcome ?? null })),
    payload: r.payload,
    createdAt: iso(r.created_at),
    finishedAt: r.finished_at ? iso(r.finished_at) : null,
  };
}

const notFound = (id: string) => errors.notFound(`No workflow with id ${id}`);
const newToken = () => {
  const token = generateToken(TOKEN_PREFIX);
  return { token, hash: hashKey(token), prefix: token.slice(0, HINT_LENGTH) };
};

/*
 * Every member reads workflows and their runs: no answer but creation's and rotation's holds the token. Creating,
 * changing, rotating and deleting need the owner or admin role, because a workflow is a credential handed to another
 * system: whoever holds its URL creates contacts and sends texts in the organization's name.
 */

export async function listWorkflows(db: Db, actor: InternalActor, input: WorkflowListInput, baseUrl: string) {
  const rows = await db.run(q.LIST_WORKFLOWS, { orgId: actor.orgId, cursor: input.cursor ?? null, limit: input.limit + 1 });
  await refuseForeignCursor(db, 'workflows', { orgId: actor.orgId, cursor: input.cursor }, rows);
  return toPage(rows, input.limit, (r) => toWorkflowView(r, baseUrl));
}

export async function getWorkflow(db: Db, actor: InternalActor, id: string, baseUrl: string): Promise<WorkflowView> {
  const [row] = await db.run(q.GET_WORKFLOW, { id, orgId: actor.orgId });
  if (!row) throw notFound(id);
  return toWorkflowView(row, baseUrl);
}

export async function createWorkflow(
  db: Db,
  actor: InternalActor,
  input: WorkflowCreateInput,
  baseUrl: string,
  now: Date,
): Promise<WorkflowWithUrl> {
  requireRole(actor, 'owner', 'admin');
  const { token, hash, prefix } = newToken();
  const row = await db.transaction(async (tx) => {
    await checkReferences(tx, actor.orgId, input.steps);
    const [inserted] = await tx.run(q.INSERT_WORKFLOW, {
      id: randomUUID(),
      orgId: actor.orgId,
      name: input.name,
      trigger: input.trigger,
      steps: JSON.stringify(input.steps),
      enabled: input.enabled,
      tokenHash: hash,
      tokenPrefix: prefix,
      createdById: actor.userId,
      now,
    });
    return inserted!;
  });
  return { ...toWorkflowView(row, baseUrl), intakeUrl: intakeUrl(baseUrl, token) };
}

/** Fields left out keep their values; new steps apply to runs recorded from then on (a run keeps the steps it got). */
export async function updateWorkflow(
  db: Db,
  actor: InternalActor,
  input: WorkflowUpdateInput,
  baseUrl: string,
  now: Date,
): Promise<WorkflowView> {
  requireRole(actor, 'owner', 'admin');
  return db.transaction(async (tx) => {
    const [cur] = await tx.run(q.LOCK_WORKFLOW, { id: input.id, orgId: actor.orgId });
    if (!cur) throw notFound(input.id);
    // Steps left as they are stay unchecked: a record deleted since is the runs' to report.
    if (input.steps) await checkReferences(tx, actor.orgId, input.steps);
    const [row] = await tx.run(q.UPDATE_WORKFLOW, {
      id: cur.id,
      name: input.name ?? cur.name,
      steps: JSON.stringify(input.steps ?? cur.steps),
      enabled: input.enabled ?? cur.enabled,
      now,
    });
    return toWorkflowView(row!, baseUrl);
  });
}

/** A new token at once; the old URL answers 404 from the next request. */
export async function rotateToken(db: Db, actor: InternalActor, id: string, baseUrl: string, now: Date): Promise<WorkflowWithUrl> {
  requireRole(actor, 'owner', 'admin');
  const { token, hash, prefix } = newToken();
  const [row] = await db.run(q.ROTATE_TOKEN, { id, orgId: actor.orgId, tokenHash: hash, tokenPrefix: prefix, now });
  if (!row) throw notFound(id);
  return { ...toWorkflowView(row, baseUrl), intakeUrl: intakeUrl(baseUrl, token) };
}

/** Its runs stay on their contacts' timelines (with the workflow's name). */
export async function deleteWorkflow(db: Db, actor: InternalActor, id: string): Promise<void> {
  requireRole(actor, 'owner', 'admin');
  const [gone] = await db.run(q.DELETE_WORKFLOW, { id, orgId: actor.orgId });
  if (!gone) throw notFound(id);
}

export async function listRuns(db: Db, actor: InternalActor, input: { id: string; limit: number; cursor?: string | undefined }) {
  const [wf] = await db.run(q.GET_WORKFLOW, { id: input.id, orgId: actor.orgId });
  if (!wf) throw notFound(input.id);
  const rows = await db.run(q.LIST_RUNS, {
    workflowId: input.id,
    orgId: actor.orgId,
    cursor: input.cursor ?? null,
    limit: input.limit + 1,
  });
  await refuseForeignCursor(db, { list: 'workflow_runs', scope: input.id }, { orgId: actor.orgId, cursor: input.cursor }, rows);
  return toPage(rows, input.limit, toRunView);
}

export async function getRun(db: Db, actor: InternalActor, runId: string): Promise<WorkflowRunView> {
  const [row] = await db.run(q.GET_RUN, { id: runId, orgId: actor.orgId });
  if (!row) throw errors.notFound(`No workflow run with id ${runId}`);
  return toRunView(row);
}
