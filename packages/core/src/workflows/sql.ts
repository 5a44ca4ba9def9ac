import { columnList } from '@leadwire/db';
import { afterCursor } from '../records/pagination.ts';

/** The columns of a workflow, listed once; every statement and the row type derive from this list. */
export const WORKFLOW_COLUMNS = [
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

const COLS = columnList([...WORKFLOW_COLUMNS]);
const W_COLS = columnList([...WORKFLOW_COLUMNS], 'w');

export const GET_WORKFLOW = `select ${COLS} from workflows where id = ? and organization_id = ?`;
export const LOCK_WORKFLOW = `${GET_WORKFLOW} for update`;
export const LIST_WORKFLOWS = `
select ${W_COLS} from workflows w
where w.organization_id = ? and ${afterCursor('w', 'workflows')}
order by w.created_at desc, w.id desc limit ?`;
export const INSERT_WORKFLOW = `
insert into workflows (${COLS}) values (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?)
returning ${COLS}`;
export const UPDATE_WORKFLOW = `
update workflows set name = ?, steps = ?::jsonb, enabled = ?, updated_at = ? where id = ? returning ${COLS}`;
export const ROTATE_TOKEN = `
update workflows set token_hash = ?, token_prefix = ?, updated_at = ? where id = ? and organization_id = ? returning ${COLS}`;
export const DELETE_WORKFLOW = `delete from workflows where id = ? and organization_id = ? returning id`;

/** The workflow an intake token opens, with what intake needs of its organization (plan and contact cap). */
export const WORKFLOW_BY_TOKEN = `
select ${W_COLS}, o.plan, o.contact_booster from workflows w join organizations o on o.id = w.organization_id
where w.token_hash = ?`;

/** One fixed one-minute window per workflow in the shared counters table (the hourly cleanup removes spent ones). */
export const COUNT_RUN = `
insert into rate_limit_counters (bucket, window_start, count) values (?, ?::timestamptz, 1)
on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
returning count`;

export const RUN_COLUMNS = ['id', 'organization_id', 'contact_id', 'workflow', 'workflow_id', 'status', 'steps', 'payload', 'created_at', 'finished_at'] as const;
const RUN_COLS = columnList([...RUN_COLUMNS]);
const R_COLS = columnList([...RUN_COLUMNS], 'r');

export const INSERT_RUN = `
insert into workflow_runs (${RUN_COLS}) values (?, ?, ?, ?, ?, 'queued', ?::jsonb, ?::jsonb, ?, null)`;
export const GET_RUN = `select ${RUN_COLS} from workflow_runs where id = ? and organization_id = ?`;
export const LIST_RUNS = `
select ${R_COLS} from workflow_runs r
where r.workflow_id = ? and r.organization_id = ? and ${afterCursor('r', 'workflow_runs')}
order by r.created_at desc, r.id desc limit ?`;

/**
 * A run for its job, with who its steps act as: the workflow's creator, else (a creator gone) the organization's
 * first owner. pg-boss hands a job to one worker at a time, so no lock is taken: steps run in their own transactions.
 */
export const LOAD_RUN = `
select ${R_COLS}, o.plan, o.contact_booster,
  coalesce(w.created_by_id, (select u.id from users u where u.organization_id = r.organization_id and u.role = 'owner'
    order by u.created_at, u.id limit 1)) as acting_user_id
from workflow_runs r join organizations o on o.id = r.organization_id left join workflows w on w.id = r.workflow_id
where r.id = ?`;
export const MARK_RUNNING = `update workflow_runs set status = 'running' where id = ? and status = 'queued'`;
/** Records one step's outcome; `?::text[]` is the path `{<index>,outcome}` inside the steps array. */
export const SET_STEP_OUTCOME = `update workflow_runs set steps = jsonb_set(steps, ?::text[], ?::jsonb) where id = ?`;
export const FINISH_RUN = `update workflow_runs set status = ?, finished_at = ? where id = ?`;
