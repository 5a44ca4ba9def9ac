import { z } from 'zod';
import { EmailSchema } from '../contacts/v1/schemas.ts';
import { PageFields, pageOf } from '../records/pagination.ts';
import { IsoDateTime, jsonObject, text } from '../validation/index.ts';
import { checkStep, STEP_ACTIONS } from './steps.ts';

export const WORKFLOW_TRIGGERS = ['webhook_received'] as const;
export const MAX_STEPS = 20;
export const RUN_STATUSES = ['queued', 'running', 'completed', 'completed_with_errors'] as const;

/** Each step checked by its action's own schema (steps.ts); what is stored is the normalised input. */
const StepInput = z
  .object({
    action: z.enum(STEP_ACTIONS, { error: () => `action must be one of: ${STEP_ACTIONS.join(', ')}` }),
    input: jsonObject({ maxKeys: 20, label: 'input' })
      .default({})
      .meta({
        description:
          "The action's inputs (GET /integrations/automation/actions) without the contact: contactId (add_tag, create_deal), id (update_contact) and to (send_sms) are the run's contact. A create_task task is attached to it.",
        example: { tags: ['webinar'] },
      }),
  })
  .transform((step, ctx) => checkStep(step, ctx));

const Steps = z
  .array(StepInput)
  .min(1, 'a workflow needs at least one step')
  .max(MAX_STEPS, `a workflow has at most ${MAX_STEPS} steps`)
  .meta({ description: 'Run in order, each whatever the outcome of the ones before.' });

const Name = text(200).min(1, 'name must not be empty').meta({ example: 'Webinar sign-ups' });

export const WorkflowCreateInput = z.object({
  name: Name,
  trigger: z
    .enum(WORKFLOW_TRIGGERS, { error: () => "trigger must be 'webhook_received'" })
    .default('webhook_received')
    .meta({ description: "'Webhook received', the only trigger: a JSON POST to the workflow's intake URL." }),
  steps: Steps,
  enabled: z.boolean().default(true),
});
export type WorkflowCreateInput = z.output<typeof WorkflowCreateInput>;

export const WorkflowIdInput = z.object({ id: z.uuid({ message: 'id must be a workflow id (UUID)' }) });
export const WorkflowUpdateInput = z.object({
  id: z.uuid({ message: 'id must be a workflow id (UUID)' }),
  name: Name.optional(),
  steps: Steps.optional(),
  enabled: z.boolean().optional(),
});
export type WorkflowUpdateInput = z.output<typeof WorkflowUpdateInput>;
export const WorkflowListInput = z.object(PageFields);
export type WorkflowListInput = z.output<typeof WorkflowListInput>;

const StepView = z.object({ action: z.enum(STEP_ACTIONS), input: z.record(z.string(), z.unknown()) });

export const WorkflowView = z.object({
  id: z.uuid(),
  name: z.string(),
  trigger: z.enum(WORKFLOW_TRIGGERS),
  steps: z.array(StepView),
  enabled: z.boolean(),
  intakeUrlHint: z.string().meta({
    description:
      "The intake URL cut after the token's first characters, to tell which URL is current. The whole URL is shown only at creation and rotation.",
    example: 'https://api.example.com/api/workflows/hooks/wfh_3kQ9xZ…',
  }),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});
export type WorkflowView = z.infer<typeof WorkflowView>;
export const WorkflowPage = pageOf(WorkflowView);

export const WorkflowWithUrl = WorkflowView.extend({
  intakeUrl: z.string().meta({
    description: 'Where to POST: holds the token, the only credential. Shown now only (a hash is stored); rotate to get a new one.',
    example: 'https://api.example.com/api/workflows/hooks/wfh_3kQ9xZ7pL2mN8vR4tY6wB1cD5fG0hJ9kA2sE4uI7oP1',
  }),
});
export type WorkflowWithUrl = z.infer<typeof WorkflowWithUrl>;

const Outcome = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('ok'),
    recordId: z.string().meta({ description: 'The record the step created or changed.' }),
    at: IsoDateTime,
  }),
  z.object({ status: z.literal('error'), code: z.string(), message: z.string(), at: IsoDateTime }),
]);

export const WorkflowRunView = z.object({
  id: z.uuid(),
  workflowId: z.uuid().nullable().meta({ description: 'null once the workflow is deleted.' }),
  workflowName: z.string(),
  contactId: z.uuid().nullable(),
  status: z.string().meta({ description: `One of ${RUN_STATUSES.join(', ')}.` }),
  steps: z.array(StepView.extend({ outcome: Outcome.nullable().meta({ description: 'null until the step has run.' }) })),
  payload: z.record(z.string(), z.unknown()).meta({ description: 'The JSON body the run was triggered with.' }),
  createdAt: IsoDateTime,
  finishedAt: IsoDateTime.nullable(),
});
export type WorkflowRunView = z.infer<typeof WorkflowRunView>;
export const WorkflowRunPage = pageOf(WorkflowRunView);
export const WorkflowRunsInput = z.object({ id: z.uuid({ message: 'id must be a workflow id (UUID)' }), ...PageFields });
export const WorkflowRunIdInput = z.object({ runId: z.uuid({ message: 'runId must be a workflow run id (UUID)' }) });

/** "" and null, which senders put in unmapped fields, mean "not given". */
const blank = z.union([z.literal(''), z.null()]);

/** The intake body: any JSON object naming its contact; everything in it is kept on the run. */
export const IntakeInput = z.looseObject({
  token: text(200, { trim: false }).meta({ description: 'The token of the intake URL.' }),
  email: z.union([blank, EmailSchema]).optional().meta({
    description: 'The contact, matched by email; an unknown email creates a contact (source `automation`).',
    example: 'ada@example.com',
  }),
  contactId: z
    .union([blank, z.uuid({ message: 'contactId must be a contact id (UUID)' })])
    .optional()
    .meta({
      description: 'A live contact of the organization; wins over email when both are sent.',
    }),
});
export type IntakeInput = z.output<typeof IntakeInput>;

export const IntakeAnswer = z.object({
  runId: z.uuid(),
  status: z.literal('queued'),
  contactId: z.uuid(),
  contactCreated: z.boolean().meta({ description: 'True when the email matched no contact and one was created.' }),
});
export type IntakeAnswer = z.infer<typeof IntakeAnswer>;

/** What of the body is stored with the run: the rules of every JSON-stored object. */
export const IntakePayload = jsonObject({ maxKeys: 200, label: 'The body' });
