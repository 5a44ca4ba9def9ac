import { z } from 'zod';
import type { InternalActor } from '../auth/actor.ts';
import type { Deps } from '../context.ts';
import { AppError, isDatabaseUnreachable } from '../errors.ts';
import type { JobDefinition } from '../jobs/boss.ts';
import { jobQueue } from '../jobs/queue.ts';
import { runStepsOf, type RunStep } from './service.ts';
import * as q from './sql.ts';
import { STEPS } from './steps.ts';

export const WORKFLOW_RUN_QUEUE = 'workflows.run';
export const WorkflowRunPayload = z.object({ runId: z.uuid() });
type Payload = z.infer<typeof WorkflowRunPayload>;
export const workflowRunQueue = jobQueue(WORKFLOW_RUN_QUEUE, WorkflowRunPayload);

type Outcome = { status: 'ok'; recordId: string; at: string } | { status: 'error'; code: string; message: string; at: string };

/**
 * One step through its action's own code. A refusal of the action (no SMS consent, a deleted pipeline, a trashed
 * contact) is the step's outcome; an unreachable database is not: it fails the job, which pg-boss retries from the
 * first step without an outcome.
 */
async function runStep(deps: Deps, actor: InternalActor, step: RunStep, contactId: string): Promise<Outcome> {
  try {
    const record = await STEPS[step.action].run({ ...deps, db: deps.db, log: deps.log }, actor, step.input, contactId);
    return { status: 'ok', recordId: record.id, at: deps.clock.now().toISOString() };
  } catch (err) {
    if (isDatabaseUnreachable(err)) throw err;
    const at = deps.clock.now().toISOString();
    if (err instanceof AppError && err.status < 500) return { status: 'error', code: err.code, message: err.message, at };
    deps.log.error({ err, action: step.action }, 'workflow step failed');
    return { status: 'error', code: 'internal_error', message: 'The step failed unexpectedly', at };
  }
}

/**
 * Runs a recorded run's steps in order, each whatever the outcome of those before (they are independent actions: a
 * text refused for want of consent should not keep a task from being created), recording each outcome as it lands.
 * Steps act as the workflow's creator with source `automation`. A step already holding an outcome is skipped, so a
 * retried job goes on where the last one stopped; only a crash between a step's commit and its outcome's can run a
 * step twice.
 */
export async function runWorkflow(deps: Deps, runId: string): Promise<void> {
  const [run] = await deps.db.run(q.LOAD_RUN, { id: runId });
  // Gone with its contact or organization, or already finished: nothing to do.
  if (!run || run.status === 'completed' || run.status === 'completed_with_errors') return;
  await deps.db.run(q.MARK_RUNNING, { id: runId });
  const actor: InternalActor = {
    orgId: run.organization_id,
    userId: run.acting_user_id ?? '',
    role: 'admin',
    // No session: a workflow acts as a key would, for its creator.
    via: 'internal_key',
    sessionId: null,
    apiKeyId: null,
    plan: run.plan,
    contactBooster: run.contact_booster,
    eventSource: 'automation',
  };
  const steps = runStepsOf(run);
  let failed = steps.some((s) => s.outcome?.status === 'error');
  for (const [index, step] of steps.entries()) {
    if (step.outcome) continue;
    const outcome = run.contact_id
      ? await runStep(deps, actor, step, run.contact_id)
      : ({ status: 'error', code: 'not_found', message: 'The run has no contact', at: deps.clock.now().toISOString() } as const);
    failed ||= outcome.status === 'error';
    await deps.db.run(q.SET_STEP_OUTCOME, { id: runId, path: [String(index), 'outcome'], outcome: JSON.stringify(outcome) });
  }
  await deps.db.run(q.FINISH_RUN, { id: runId, status: failed ? 'completed_with_errors' : 'completed', now: deps.clock.now() });
}

/**
 * `workflows.run`: one job per recorded run, queued in the intake's transaction. Retried 5 times with a growing delay
 * (30 s doubling, at most 10 min) when the database could not be reached; a step's own refusal never fails the job.
 */
export function workflowRunJob(deps: Deps): JobDefinition<Payload> {
  return {
    queue: workflowRunQueue.name,
    batchSize: 5,
    retryLimit: 5,
    retryDelay: 30,
    queueOptions: { retryBackoff: true, retryDelayMax: 600, notify: true, deleteAfterSeconds: 24 * 60 * 60 },
    parse: workflowRunQueue.parse,
    handle: ({ runId }) => runWorkflow(deps, runId),
  };
}
