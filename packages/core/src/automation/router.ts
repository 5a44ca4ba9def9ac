import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';
import type { Db } from '@leadwire/db';
import type { Deps, Logger } from '../context.ts';
import { AppContact } from '../contacts/app/schemas.ts';
import { DealView } from '../deals/schemas.ts';
import { type ErrorCode, errors, issuesFromZod } from '../errors.ts';
import { MessageView } from '../messages/schemas.ts';
import { TaskView } from '../tasks/schemas.ts';
import { router } from '../trpc.ts';
import {
  AddTagAction,
  CreateContactAction,
  CreateDealAction,
  CreateTaskAction,
  SendSmsAction,
  UpdateContactAction,
} from './action-inputs.ts';
import { ACTION_DEFINITIONS } from './actions.ts';
import { subscribe, unsubscribe, whoAmI } from './hooks.ts';
import { runAddTag, runCreateContact, runCreateDeal, runCreateTask, runSendSms, runUpdateContact } from './run.ts';
import { ActionList, MeOutput, SampleList, SamplesInput, SubscribeInput, Subscription, TriggerList, UnsubscribeInput } from './schemas.ts';
import { listTriggers, triggerSamples } from './triggers.ts';

const tags = ['Automation platforms'];
const BASE = '/integrations/automation';
const AUTH_ERRORS = ['unauthorized', 'wrong_api_surface', 'rate_limited'] as const;
const INPUT_ERRORS = [...AUTH_ERRORS, 'validation_failed'] as const;

/**
 * A platform shows the `error` text to someone building a workflow, so one sentence names every input that is
 * missing or wrong ("firstName is required; lastName is required"); `issues` keeps them one by one.
 */
function nameEveryInput(error: { code: string; cause?: unknown }): void {
  if (error.code !== 'BAD_REQUEST') return;
  const cause = error.cause as { name?: unknown; issues?: unknown } | undefined;
  if (cause?.name !== 'ZodError' || !Array.isArray(cause.issues)) return;
  const issues = issuesFromZod(cause.issues);
  const sentence = issues.map((i) => (i.message.startsWith(i.path) || !i.path ? i.message : `${i.path}: ${i.message}`)).join('; ');
  throw errors.validation(issues, `Validation failed: ${sentence}`);
}

const actionProcedure = internalProcedure.use(async ({ next }) => {
  const result = await next();
  if (!result.ok) nameEveryInput(result.error);
  return result;
});

const actionDeps = (ctx: { deps: Deps; db: Db; log: Logger }) => ({ ...ctx.deps, db: ctx.db, log: ctx.log });
const actionMeta = (key: string, summary: string, errorCodes: readonly ErrorCode[], successStatus = 200) => ({
  openapi: { method: 'POST' as const, path: `${BASE}/actions/${key}` as const, tags, summary },
  successStatus,
  errorCodes: [...INPUT_ERRORS, ...errorCodes],
});

/**
 * What REST-hook automation platforms (Zapier and the like) call: subscribe and unsubscribe hooks, test the key, list
 * triggers with samples, list and run actions. Internal keys (in `X-Api-Key` or `Authorization: Bearer`) and sessions
 * reach it. Subscribing needs the owner or admin role, as webhook endpoints do; everything else any member may do.
 */
export const automationRouter = router({
  subscribe: internalProcedure
    .meta({
      openapi: { method: 'POST', path: `${BASE}/subscribe`, tags, summary: 'Subscribe a REST hook to one trigger (owner or admin)' },
      successStatus: 201,
      errorCodes: [...INPUT_ERRORS, 'forbidden_role'],
    })
    .input(SubscribeInput)
    .output(Subscription)
    .mutation(({ ctx, input }) => subscribe({ ...ctx.deps, db: ctx.db }, ctx.actor, input)),

  unsubscribe: internalProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${BASE}/subscribe/{id}`,
        tags,
        summary: 'Unsubscribe a REST hook (its own key, or an owner or admin)',
      },
      successStatus: 204,
      errorCodes: [...INPUT_ERRORS, 'not_found', 'forbidden_role'],
    })
    .input(UnsubscribeInput)
    .output(z.void())
    .mutation(({ ctx, input }) => unsubscribe(ctx.db, ctx.actor, input.id)),

  me: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BASE}/me`,
        tags,
        summary: 'Test the key: the organization and user it acts for (connection label)',
      },
      errorCodes: AUTH_ERRORS,
    })
    .input(z.void())
    .output(MeOutput)
    .query(({ ctx }) => whoAmI(ctx.db, ctx.actor)),

  triggers: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BASE}/triggers`,
        tags,
        summary: 'The triggers a hook may subscribe to, with a sample payload each',
      },
      errorCodes: AUTH_ERRORS,
    })
    .input(z.void())
    .output(TriggerList)
    .query(() => listTriggers()),

  samples: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BASE}/triggers/{event}/samples`,
        tags,
        summary: "Up to 3 of the organization's latest payloads of a trigger",
      },
      errorCodes: [...INPUT_ERRORS, 'not_found'],
    })
    .input(SamplesInput)
    .output(SampleList)
    .query(({ ctx, input }) => triggerSamples(ctx.db, ctx.actor, input.event)),

  actions: internalProcedure
    .meta({
      openapi: { method: 'GET', path: `${BASE}/actions`, tags, summary: 'The actions with their required and optional inputs' },
      errorCodes: AUTH_ERRORS,
    })
    .input(z.void())
    .output(ActionList)
    .query(() => [...ACTION_DEFINITIONS]),

  run: router({
    create_contact: actionProcedure
      .meta(
        actionMeta(
          'create_contact',
          'Create a contact (source zapier)',
          ['email_exists', 'contact_limit_reached', 'company_not_found', 'save_failed'],
          201,
        ),
      )
      .input(CreateContactAction)
      .output(AppContact)
      .mutation(({ ctx, input }) => runCreateContact(actionDeps(ctx), ctx.actor, input)),
    update_contact: actionProcedure
      .meta(
        actionMeta('update_contact', 'Update a contact found by id or email', [
          'not_found',
          'email_exists',
          'company_not_found',
          'save_failed',
        ]),
      )
      .input(UpdateContactAction)
      .output(AppContact)
      .mutation(({ ctx, input }) => runUpdateContact(actionDeps(ctx), ctx.actor, input)),
    create_deal: actionProcedure
      .meta(actionMeta('create_deal', 'Open a deal for a contact on a pipeline', ['not_found', 'pipeline_has_no_stages'], 201))
      .input(CreateDealAction)
      .output(DealView)
      .mutation(({ ctx, input }) => runCreateDeal(actionDeps(ctx), ctx.actor, input)),
    create_task: actionProcedure
      .meta(actionMeta('create_task', 'Create a task', [], 201))
      .input(CreateTaskAction)
      .output(TaskView)
      .mutation(({ ctx, input }) => runCreateTask(actionDeps(ctx), ctx.actor, input)),
    send_sms: actionProcedure
      .meta(
        actionMeta('send_sms', 'Text a contact who consented to SMS', ['not_found', 'sms_consent_required', 'contact_has_no_phone'], 201),
      )
      .input(SendSmsAction)
      .output(MessageView)
      .mutation(({ ctx, input }) => runSendSms(actionDeps(ctx), ctx.actor, input)),
    add_tag: actionProcedure
      .meta(actionMeta('add_tag', 'Add tags to a contact', ['not_found', 'save_failed']))
      .input(AddTagAction)
      .output(AppContact)
      .mutation(({ ctx, input }) => runAddTag(actionDeps(ctx), ctx.actor, input)),
  }),
});
