import { randomUUID } from 'node:crypto';
import { columnList, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { afterCursor, toPage } from '../records/pagination.ts';
import { AppError, errors } from '../errors.ts';
import { emitEvents } from '../events/outbox.ts';
import type { TaskCreateInput, TaskListInput, TaskUpdateInput, TaskView } from './schemas.ts';

interface TaskRow {
  id: string;
  title: string;
  due_at: Date | null;
  assignee_id: string | null;
  contact_id: string | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['id', 'created_at', 'updated_at', 'organization_id', 'contact_id', 'assignee_id', 'title', 'due_at', 'completed_at'];

/** Tasks of a trashed contact are hidden with it; tasks without a contact are always visible. */
const VISIBLE = `
from tasks t left join contacts c on c.id = t.contact_id
where t.organization_id = ? and (t.contact_id is null or c.deleted_at is null)`;
const GET = `select ${columnList(COLUMNS, 't')} ${VISIBLE} and t.id = ?`;
const LOCK = `select ${columnList(COLUMNS, 't')} ${VISIBLE} and t.id = ? for update of t`;
const LIST = `
select ${columnList(COLUMNS, 't')} ${VISIBLE}
  and (?::uuid is null or t.contact_id = ?) and (?::uuid is null or t.assignee_id = ?)
  and (?::text is null or (t.completed_at is not null) = (?::text = 'completed'))
  and ${afterCursor('t', 'tasks')}
order by t.created_at desc, t.id desc
limit ?`;
const USER = `select active from users where id = ? and organization_id = ?`;
const INSERT = `
insert into tasks (id, organization_id, title, due_at, assignee_id, contact_id, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?)
returning ${columnList(COLUMNS)}`;
const UPDATE = `update tasks set title = ?, due_at = ?, assignee_id = ?, contact_id = ?, updated_at = ? where id = ? returning ${columnList(COLUMNS)}`;
/** Only the first completion matches: a second (or concurrent) one finds completed_at set and changes nothing. */
const COMPLETE = `
update tasks t set completed_at = ?, updated_at = ?
where t.id = ? and t.organization_id = ? and t.completed_at is null
  and (t.contact_id is null or exists (select 1 from contacts c where c.id = t.contact_id and c.deleted_at is null))
returning ${columnList(COLUMNS, 't')}`;

const toView = (r: TaskRow): TaskView => ({
  id: r.id,
  title: r.title,
  dueAt: isoOrNull(r.due_at),
  assigneeId: r.assignee_id,
  contactId: r.contact_id,
  completedAt: isoOrNull(r.completed_at),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/** An assignee is an active user of the organization; a user of another organization looks unknown. */
async function checkAssignee(db: Db, orgId: string, userId: string) {
  const [user] = await db.execute<{ active: boolean }[]>(USER, [userId, orgId]);
  if (!user) throw errors.notFound(`No user with id ${userId}`);
  if (!user.active) throw new AppError(422, 'assignee_inactive', `User ${userId} is deactivated and cannot be assigned tasks`);
}

export async function listTasks(db: Db, actor: InternalActor, q: TaskListInput) {
  const rows = await db.execute<TaskRow[]>(LIST, [
    actor.orgId,
    q.contactId ?? null, q.contactId ?? null,
    q.assigneeId ?? null, q.assigneeId ?? null,
    q.status ?? null, q.status ?? null,
    q.cursor ?? null, q.cursor ?? null, actor.orgId,
    q.limit + 1,
  ]);
  return toPage(rows, q.limit, toView);
}

export async function getTask(db: Db, actor: InternalActor, id: string): Promise<TaskView> {
  const [row] = await db.execute<TaskRow[]>(GET, [actor.orgId, id]);
  if (!row) throw errors.notFound(`No task with id ${id}`);
  return toView(row);
}

/** Emits task.created with `data.task`. */
export async function createTask(db: Db, actor: InternalActor, input: TaskCreateInput, now: Date): Promise<TaskView> {
  return db.transaction(async (tx) => {
    if (input.contactId) await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    if (input.assigneeId) await checkAssignee(tx, actor.orgId, input.assigneeId);
    const [row] = await tx.execute<TaskRow[]>(INSERT, [
      randomUUID(),
      actor.orgId,
      input.title,
      input.dueAt ?? null,
      input.assigneeId ?? null,
      input.contactId ?? null,
      now,
      now,
    ]);
    const task = toView(row!);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'task.created', source: actor.eventSource ?? 'app', data: { task }, at: now }]);
    return task;
  });
}

/** Title, due date, assignee and contact; the spec has no task.updated event, so none is emitted. */
export async function updateTask(db: Db, actor: InternalActor, input: TaskUpdateInput, now: Date): Promise<TaskView> {
  return db.transaction(async (tx) => {
    const [cur] = await tx.execute<TaskRow[]>(LOCK, [actor.orgId, input.id]);
    if (!cur) throw errors.notFound(`No task with id ${input.id}`);
    if (input.contactId) await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    if (input.assigneeId) await checkAssignee(tx, actor.orgId, input.assigneeId);
    const pick = <T>(sent: T | undefined, stored: T): T => (sent === undefined ? stored : sent);
    const [row] = await tx.execute<TaskRow[]>(UPDATE, [
      input.title ?? cur.title,
      pick<string | Date | null>(input.dueAt, cur.due_at),
      pick(input.assigneeId, cur.assignee_id),
      pick(input.contactId, cur.contact_id),
      now,
      cur.id,
    ]);
    return toView(row!);
  });
}

/** Idempotent: the first completion sets completedAt and emits task.completed (`data.task`); later ones return the task as is. */
export async function completeTask(db: Db, actor: InternalActor, id: string, now: Date): Promise<TaskView> {
  return db.transaction(async (tx) => {
    const [row] = await tx.execute<TaskRow[]>(COMPLETE, [now, now, id, actor.orgId]);
    if (!row) return getTask(tx, actor, id);
    const task = toView(row);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'task.completed', source: 'app', data: { task }, at: now }]);
    return task;
  });
}
