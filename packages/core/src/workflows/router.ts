import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';
import type { RequestContext } from '../context.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { baseProcedure, router } from '../trpc.ts';
import { receiveWebhook } from './intake.ts';
import {
  IntakeAnswer,
  IntakeInput,
  WorkflowCreateInput,
  WorkflowIdInput,
  WorkflowListInput,
  WorkflowPage,
  WorkflowRunIdInput,
  WorkflowRunPage,
  WorkflowRunsInput,
  WorkflowRunView,
  WorkflowUpdateInput,
  WorkflowView,
  WorkflowWithUrl,
} from './schemas.ts';
import { createWorkflow, deleteWorkflow, getRun, getWorkflow, listRuns, listWorkflows, rotateToken, updateWorkflow } from './service.ts';

const tags = ['Workflows'];
const ON_RECORD = [...INTERNAL_ERRORS, 'not_found'] as const;
const ADMIN = [...INTERNAL_ERRORS, 'forbidden_role'] as const;
const ADMIN_ON_RECORD = [...ON_RECORD, 'forbidden_role'] as const;
const baseUrl = (ctx: Pick<RequestContext, 'deps'>) => ctx.deps.config.BASE_URL;

/** The answers holding an intake URL hold a credential: never kept by a cache. */
const urlProcedure = internalProcedure.use(({ ctx, next }) => {
  ctx.setHeader('cache-control', 'no-store');
  return next();
});

/**
 * Workflows with the 'Webhook received' trigger, their runs, and the intake their URL opens. Members read; owners
 * and admins create, change, rotate and delete (service.ts says why). The intake takes no key: its token is the
 * credential.
 */
export const workflowsRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/workflows', tags, summary: 'Workflows, newest first' },
      errorCodes: [...INTERNAL_ERRORS, 'invalid_cursor'],
    })
    .input(WorkflowListInput)
    .output(WorkflowPage)
    .query(({ ctx, input }) => listWorkflows(ctx.db, ctx.actor, input, baseUrl(ctx))),

  get: internalProcedure
    .meta({ openapi: { method: 'GET', path: '/workflows/{id}', tags, summary: 'A workflow' }, errorCodes: ON_RECORD })
    .input(WorkflowIdInput)
    .output(WorkflowView)
    .query(({ ctx, input }) => getWorkflow(ctx.db, ctx.actor, input.id, baseUrl(ctx))),

  create: urlProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/workflows',
        tags,
        summary: 'Create a workflow (owner or admin); the answer holds its intake URL, shown this once',
        description:
          "Each step's input is checked with its automation action's schema; the contact-naming input (contactId, update_contact's id, send_sms's to) is the run's contact and must be left out. A pipeline (create_deal) or company (update_contact) a step names must be one of the organization's, here and when the steps are changed.",
      },
      successStatus: 201,
      errorCodes: ADMIN,
    })
    .input(WorkflowCreateInput)
    .output(WorkflowWithUrl)
    .mutation(({ ctx, input }) => createWorkflow(ctx.db, ctx.actor, input, baseUrl(ctx), ctx.deps.clock.now())),

  update: internalProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/workflows/{id}',
        tags,
        summary: 'Change a workflow (owner or admin); fields left out keep their values',
      },
      errorCodes: ADMIN_ON_RECORD,
    })
    .input(WorkflowUpdateInput)
    .output(WorkflowView)
    .mutation(({ ctx, input }) => updateWorkflow(ctx.db, ctx.actor, input, baseUrl(ctx), ctx.deps.clock.now())),

  rotateToken: urlProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/workflows/{id}/rotate-token',
        tags,
        summary: 'A new intake URL (owner or admin); the old one stops at once',
      },
      errorCodes: ADMIN_ON_RECORD,
    })
    .input(WorkflowIdInput)
    .output(WorkflowWithUrl)
    .mutation(({ ctx, input }) => rotateToken(ctx.db, ctx.actor, input.id, baseUrl(ctx), ctx.deps.clock.now())),

  delete: internalProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/workflows/{id}',
        tags,
        summary: 'Delete a workflow (owner or admin); its runs stay on their contacts',
      },
      successStatus: 204,
      errorCodes: ADMIN_ON_RECORD,
    })
    .input(WorkflowIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteWorkflow(ctx.db, ctx.actor, input.id)),

  runs: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/workflows/{id}/runs', tags, summary: "A workflow's runs, newest first, with each step's outcome" },
      errorCodes: [...ON_RECORD, 'invalid_cursor'],
    })
    .input(WorkflowRunsInput)
    .output(WorkflowRunPage)
    .query(({ ctx, input }) => listRuns(ctx.db, ctx.actor, input)),

  run: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/workflow-runs/{runId}', tags, summary: "A workflow run with each step's outcome" },
      errorCodes: ON_RECORD,
    })
    .input(WorkflowRunIdInput)
    .output(WorkflowRunView)
    .query(({ ctx, input }) => getRun(ctx.db, ctx.actor, input.runId)),

  intake: baseProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/workflows/hooks/{token}',
        tags,
        summary: "Trigger a workflow: its intake URL ('Webhook received'); no key, the token is the credential",
        description:
          'Any JSON object with `email` or `contactId`. Records a run on that contact (an unknown email creates one, source `automation`) and answers 202 while the steps run as a job. 60 runs a minute per workflow.',
        protect: false,
      },
      successStatus: 202,
      errorCodes: ['validation_failed', 'missing_identity', 'not_found', 'rate_limited', 'contact_limit_reached', 'save_failed'],
    })
    .input(IntakeInput)
    .output(IntakeAnswer)
    .mutation(({ ctx, input }) => receiveWebhook({ ...ctx.deps, db: ctx.db }, input, (name, value) => ctx.setHeader(name, value))),
});
