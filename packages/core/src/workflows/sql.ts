import { qb, sql, statement } from '@leadwire/db';
import { newestFirst } from '../records/pagination.ts';
import { qualified } from '../records/query.ts';

/** A workflow's columns, every statement's selection: a misspelt one fails the type check. */
const WORKFLOW = [
  'id',
  'organization_id',
  'name',
  'trigger',
  'steps',
  'enabled',
  'token_hash',
  'token_prefix',
  'created_by_id',
  'created_at',
  'updated_at',
] as const;
const RUN = [
  'id',
  'organization_id',
  'contact_id',
  'workflow',
  'workflow_id',
  'status',
  'steps',
  'payload',
  'created_at',
  'finished_at',
] as const;

export const GET_WORKFLOW = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('workflows').select(WORKFLOW).where('id', '=', p.id).where('organization_id', '=', p.orgId),
);
export type WorkflowRow = NonNullable<(typeof GET_WORKFLOW)['row']>;

export const LOCK_WORKFLOW = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('workflows').select(WORKFLOW).where('id', '=', p.id).where('organization_id', '=', p.orgId).forUpdate(),
);

/** Newest first, after the `cursor` workflow (null: from the start), keyed by (created_at, id). */
export const LIST_WORKFLOWS = statement<{ orgId: string; cursor: string | null; limit: number }>()((p) =>
  newestFirst(qb.selectFrom('workflows').select(WORKFLOW).where('organization_id', '=', p.orgId), 'workflows', 'workflows', p),
);

export const INSERT_WORKFLOW = statement<{
  id: string;
  orgId: string;
  name: string;
  trigger: 'webhook_received';
  steps: string;
  enabled: boolean;
  tokenHash: string;
  tokenPrefix: string;
  createdById: string;
  now: Date;
}>()((p) =>
  qb
    .insertInto('workflows')
    .values({
      id: p.id,
      organization_id: p.orgId,
      name: p.name,
      trigger: p.trigger,
      steps: sql`${p.steps}::jsonb`,
      enabled: p.enabled,
      token_hash: p.tokenHash,
      token_prefix: p.tokenPrefix,
      created_by_id: p.createdById,
      created_at: p.now,
      updated_at: p.now,
    })
    .returning(WORKFLOW),
);

export const UPDATE_WORKFLOW = statement<{ id: string; name: string; steps: string; enabled: boolean; now: Date }>()((p) =>
  qb
    .updateTable('workflows')
    .set({ name: p.name, steps: sql`${p.steps}::jsonb`, enabled: p.enabled, updated_at: p.now })
    .where('id', '=', p.id)
    .returning(WORKFLOW),
);

export const ROTATE_TOKEN = statement<{ id: string; orgId: string; tokenHash: string; tokenPrefix: string; now: Date }>()((p) =>
  qb
    .updateTable('workflows')
    .set({ token_hash: p.tokenHash, token_prefix: p.tokenPrefix, updated_at: p.now })
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .returning(WORKFLOW),
);

export const DELETE_WORKFLOW = statement<{ id: string; orgId: string }>()((p) =>
  qb.deleteFrom('workflows').where('id', '=', p.id).where('organization_id', '=', p.orgId).returning('id'),
);

/** The workflow an intake token opens, with what intake needs of its organization (plan and contact cap). */
export const WORKFLOW_BY_TOKEN = statement<{ tokenHash: string }>()((p) =>
  qb
    .selectFrom('workflows as w')
    .innerJoin('organizations as o', 'o.id', 'w.organization_id')
    .select([...qualified('w', WORKFLOW), 'o.plan', 'o.contact_booster'])
    .where('w.token_hash', '=', p.tokenHash),
);

/** One fixed one-minute window per workflow in the shared counters table (the hourly cleanup removes spent ones). */
export const COUNT_RUN = statement<{ bucket: string; windowStart: Date }>()((p) =>
  qb
    .insertInto('rate_limit_counters')
    .values({ bucket: p.bucket, window_start: sql`${p.windowStart}::timestamptz`, count: sql.lit(1) })
    .onConflict((oc) =>
      oc.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({ count: sql<number>`${eb.ref('rate_limit_counters.count')} + 1` })),
    )
    .returning('count'),
);

export const INSERT_RUN = statement<{
  id: string;
  orgId: string;
  contactId: string;
  workflow: string;
  workflowId: string;
  steps: string;
  payload: string;
  now: Date;
}>()((p) =>
  qb.insertInto('workflow_runs').values({
    id: p.id,
    organization_id: p.orgId,
    contact_id: p.contactId,
    workflow: p.workflow,
    workflow_id: p.workflowId,
    status: sql.lit('queued'),
    steps: sql`${p.steps}::jsonb`,
    payload: sql`${p.payload}::jsonb`,
    created_at: p.now,
    finished_at: sql.lit(null),
  }),
);

export const GET_RUN = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('workflow_runs').select(RUN).where('id', '=', p.id).where('organization_id', '=', p.orgId),
);
export type RunRow = NonNullable<(typeof GET_RUN)['row']>;

/** A workflow's runs, newest first, after the `cursor` run (null: from the start), keyed by (created_at, id). */
export const LIST_RUNS = statement<{ workflowId: string; orgId: string; cursor: string | null; limit: number }>()((p) =>
  newestFirst(
    qb.selectFrom('workflow_runs').select(RUN).where('workflow_id', '=', p.workflowId).where('organization_id', '=', p.orgId),
    'workflow_runs',
    'workflow_runs',
    p,
  ),
);

/**
 * A run for its job, with who its steps act as: the workflow's creator, else (a creator gone) the organization's
 * first owner. pg-boss hands a job to one worker at a time, so no lock is taken: steps run in their own transactions.
 */
export const LOAD_RUN = statement<{ id: string }>()((p) =>
  qb
    .selectFrom('workflow_runs as r')
    .innerJoin('organizations as o', 'o.id', 'r.organization_id')
    .leftJoin('workflows as w', 'w.id', 'r.workflow_id')
    .select((eb) => [
      ...qualified('r', RUN),
      'o.plan',
      'o.contact_booster',
      eb.fn
        .coalesce(
          'w.created_by_id',
          eb
            .selectFrom('users as u')
            .select('u.id')
            .whereRef('u.organization_id', '=', 'r.organization_id')
            .where('u.role', '=', sql.lit('owner'))
            .orderBy('u.created_at')
            .orderBy('u.id')
            .limit(sql.lit(1)),
        )
        .as('acting_user_id'),
    ])
    .where('r.id', '=', p.id),
);

export const MARK_RUNNING = statement<{ id: string }>()((p) =>
  qb
    .updateTable('workflow_runs')
    .set({ status: sql.lit('running') })
    .where('id', '=', p.id)
    .where('status', '=', sql.lit('queued')),
);

/** Records one step's outcome; `path` is `{<index>,outcome}` inside the steps array. */
export const SET_STEP_OUTCOME = statement<{ id: string; path: string[]; outcome: string }>()((p) =>
  qb
    .updateTable('workflow_runs')
    .set((eb) => ({ steps: sql`jsonb_set(${eb.ref('steps')}, ${p.path}::text[], ${p.outcome}::jsonb)` }))
    .where('id', '=', p.id),
);

export const FINISH_RUN = statement<{ id: string; status: 'completed' | 'completed_with_errors'; now: Date }>()((p) =>
  qb.updateTable('workflow_runs').set({ status: p.status, finished_at: p.now }).where('id', '=', p.id),
);
