import type { Db } from '@leadwire/db';
import { internalProcedure } from '../auth/internal.ts';
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
import { BASE, INPUT_ERRORS, tags } from './meta.ts';
import { runAddTag, runCreateContact, runCreateDeal, runCreateTask, runSendSms, runUpdateContact } from './run.ts';

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

/** The spec's six actions, run through the application's services (run.ts). */
export const actionRouter = router({
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
    .meta(actionMeta('send_sms', 'Text a contact who consented to SMS', ['not_found', 'sms_consent_required', 'contact_has_no_phone'], 201))
    .input(SendSmsAction)
    .output(MessageView)
    .mutation(({ ctx, input }) => runSendSms(actionDeps(ctx), ctx.actor, input)),
  add_tag: actionProcedure
    .meta(actionMeta('add_tag', 'Add tags to a contact', ['not_found', 'save_failed']))
    .input(AddTagAction)
    .output(AppContact)
    .mutation(({ ctx, input }) => runAddTag(actionDeps(ctx), ctx.actor, input)),
});
