import type { z } from 'zod';
import { AddTagAction, CreateDealAction, CreateTaskAction, SendSmsAction, UpdateContactAction } from '../automation/action-inputs.ts';
import { type ActionDeps, runAddTag, runCreateDeal, runCreateTask, runSendSms, runUpdateContact } from '../automation/run.ts';
import type { InternalActor } from '../auth/actor.ts';

/*
 * Workflow steps are the automation actions (spec "Automation-platform hooks", Actions), validated by the very schemas
 * the action routes use and run by the very functions behind them (automation/run.ts). The one difference: a run is
 * about one contact, so the input that names the contact (`contactId`, update_contact's `id`, send_sms's `to`) is not
 * part of a step. It is filled in with the run's contact when the step runs; a step that gives it is refused.
 */

export const STEP_ACTIONS = ['add_tag', 'create_task', 'create_deal', 'update_contact', 'send_sms'] as const;
export type StepAction = (typeof STEP_ACTIONS)[number];

/** A kind of the organization's records a step input can name (references.ts checks them when a workflow is written). */
export type ReferenceKind = 'pipeline' | 'company';

interface StepSpec {
  schema: z.ZodType<object>;
  /** The action's input that names the contact; the run supplies it. */
  contactInput?: string;
  /** Every other input naming a record of the organization, with its kind. */
  references?: Record<string, ReferenceKind>;
  /** Runs the action for the run's contact; answers the id of the record it created or changed. */
  run(deps: ActionDeps, actor: InternalActor, input: Record<string, unknown>, contactId: string): Promise<{ id: string }>;
}

export const STEPS: Record<StepAction, StepSpec> = {
  add_tag: {
    schema: AddTagAction,
    contactInput: 'contactId',
    run: (deps, actor, input, contactId) => runAddTag(deps, actor, AddTagAction.parse({ ...input, contactId })),
  },
  // The task is attached to the run's contact, so it shows on the contact's timeline.
  create_task: {
    schema: CreateTaskAction,
    run: (deps, actor, input, contactId) => runCreateTask(deps, actor, CreateTaskAction.parse(input), contactId),
  },
  create_deal: {
    schema: CreateDealAction,
    contactInput: 'contactId',
    references: { pipelineId: 'pipeline' },
    run: (deps, actor, input, contactId) => runCreateDeal(deps, actor, CreateDealAction.parse({ ...input, contactId })),
  },
  // With the contact given as `id`, update_contact's `email` is the contact's new address.
  update_contact: {
    schema: UpdateContactAction,
    contactInput: 'id',
    references: { company: 'company' },
    run: (deps, actor, input, contactId) => runUpdateContact(deps, actor, UpdateContactAction.parse({ ...input, id: contactId })),
  },
  send_sms: {
    schema: SendSmsAction,
    contactInput: 'to',
    run: (deps, actor, input, contactId) => runSendSms(deps, actor, SendSmsAction.parse({ ...input, to: contactId })),
  },
};

/** Stands in for the run's contact while a step is checked at creation: any contact id satisfies the schemas. */
const SOME_CONTACT = '00000000-0000-4000-8000-000000000000';

export interface StepDefinition {
  action: StepAction;
  input: Record<string, unknown>;
}

/**
 * Checks one step's input with its action's schema, the contact filled in, and answers the input as it will be run
 * (normalised: trimmed, tags split), without the contact. Issues name the input under the step (`steps.1.input.tags`).
 */
export function checkStep(step: StepDefinition, ctx: z.RefinementCtx): StepDefinition {
  const spec = STEPS[step.action];
  const key = spec.contactInput;
  if (key !== undefined && key in step.input) {
    ctx.addIssue({
      code: 'custom',
      path: ['input', key],
      message: `${key} is the run's contact and cannot be set in a step (${step.action})`,
      input: step.input,
    });
    return step;
  }
  const parsed = spec.schema.safeParse(key === undefined ? step.input : { ...step.input, [key]: SOME_CONTACT });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path.map(String).join('.');
      ctx.addIssue({
        code: 'custom',
        path: ['input', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
        message: `${step.action}: ${issue.message.startsWith(field) || !field ? issue.message : `${field}: ${issue.message}`}`,
        input: step.input,
      });
    }
    return step;
  }
  const input = { ...(parsed.data as Record<string, unknown>) };
  if (key !== undefined) delete input[key];
  // "" and null mean "not given" in the action schemas; a stored step keeps only what it sets.
  for (const [k, v] of Object.entries(input)) if (v === '' || v === null || v === undefined) delete input[k];
  return { action: step.action, input };
}
