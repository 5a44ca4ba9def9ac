import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type DB, type Db } from '@leadwire/db';
import type { Selectable } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { newestFirst, type PageParams } from '../records/pagination.ts';
import { getRecord, ifGiven, listRecords, qualified, requireRecord, type ById } from '../records/query.ts';
import { AppError, errors } from '../errors.ts';
import { emitEvents } from '../events/outbox.ts';
import type { TaskCreateInput, TaskListInput, TaskUpdateInput, TaskView } from './schemas.ts';

/** What a task's view is made of; inserts and updates return the same columns the reads select. */
const TASK_COLUMNS = ['id', 'created_at', 'updated_at', 'contact_id', 'assignee_id', 'title', 'due_at', 'completed_at'] as const;
type TaskRow = Pick<Selectable<DB['tasks']>, (typeof TASK_COLUMNS)[number]>;

/** Tasks of a trashed contact are hidden with it; tasks without a contact are always visible. */
const visible = (orgId: string) =>
  qb
    .selectFrom('tasks as t')
    .leftJoin('contacts as c', 'c.id', 't.contact_id')
    .where('t.organization_id', '=', orgId)
    .where((eb) => eb.or([eb('t.contact_id', 'is', null), eb('c.deleted_at', 'is', null)]))
    .select(qualified('t', TASK_COLUMNS));

const GET = statement<ById>()((p) => visible(p.orgId).where('t.id', '=', p.id));
const LOCK = statement<ById>()((p) => visible(p.orgId).where('t.id', '=', p.id).forUpdate('t'));

interface TaskFilters {
  contactId: string | null;
  assigneeId: string | null;
  status: 'open' | 'completed' | null;
}
const LIST = statement<TaskFilters & PageParams>()((p) =>
  newestFirst(
    visible(p.orgId).where((eb) =>
      eb.and([
        ifGiven(eb, p.contactId, 'uuid', eb('t.contact_id', '=', p.contactId)),
        ifGiven(eb, p.assigneeId, 'uuid', eb('t.assignee_id', '=', p.assigneeId)),
        ifGiven(eb, p.status, 'text', sql<boolean>`(${eb.ref('t.completed_at')} is not null) = (${p.status}::text = 'completed')`),
      ]),
    ),
    'tasks',
    't',
    p,
  ),
);
const USER = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('users').select('active').where('id', '=', p.id).where('organization_id', '=', p.orgId),
);

/** A due date as sent (ISO text, read by PostgreSQL at full precision, not rounded through a Date) or as stored. */
type DueAt = string | Date | null;
const dueAt = (v: DueAt) => sql<Date | null>`${v}::timestamptz`;
interface TaskFields {
  title: string;
  dueAt: DueAt;
  assigneeId: string | null;
  contactId: string | null;
  now: Date;
}
const INSERT = statement<TaskFields & { id: string; orgId: string }>()((p) =>
  qb
    .insertInto('tasks')
    .values({
      id: p.id,
      organization_id: p.orgId,
      title: p.title,
      due_at: dueAt(p.dueAt),
      assignee_id: p.assigneeId,
      contact_id: p.contactId,
      created_at: p.now,
      updated_at: p.now,
    })
    .returning(TASK_COLUMNS),
);
const UPDATE = statement<TaskFields & { id: string }>()((p) =>
  qb
    .updateTable('tasks')
    .set({ title: p.title, due_at: dueAt(p.dueAt), assignee_id: p.assigneeId, contact_id: p.contactId, updated_at: p.now })
    .where('id', '=', p.id)
    .returning(TASK_COLUMNS),
);
/** Only the first completion matches: a second (or concurrent) one finds completed_at set and changes nothing. */
const COMPLETE = statement<{ now: Date; id: string; orgId: string }>()((p) =>
  qb
    .updateTable('tasks as t')
    .set({ completed_at: p.now, updated_at: p.now })
    .where('t.id', '=', p.id)
    .where('t.organization_id', '=', p.orgId)
    .where('t.completed_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('t.contact_id', 'is', null),
        eb.exists(
          eb
            .selectFrom('contacts as c')
            .select(eb.lit(1).as('one'))
            .whereRef('c.id', '=', 't.contact_id')
            .where('c.deleted_at', 'is', null),
        ),
      ]),
    )
    .returning(qualified('t', TASK_COLUMNS)),
);

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
  const [user] = await db.run(USER, { id: userId, orgId });
  if (!user) throw errors.notFound(`No user with id ${userId}`);
  if (!user.active) throw new AppError('assignee_inactive', `User ${userId} is deactivated and cannot be assigned tasks`);
}

export function listTasks(db: Db, actor: InternalActor, q: TaskListInput) {
  const filters = { contactId: q.contactId ?? null, assigneeId: q.assigneeId ?? null, status: q.status ?? null };
  return listRecords(db, 'tasks', LIST, actor.orgId, q, filters, toView);
}

export function getTask(db: Db, actor: InternalActor, id: string): Promise<TaskView> {
  return getRecord(db, GET, actor.orgId, id, 'task', toView);
}

/** Emits task.created with `data.task`. */
export async function createTask(db: Db, actor: InternalActor, input: TaskCreateInput, now: Date): Promise<TaskView> {
  return db.transaction(async (tx) => {
    if (input.contactId) await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    if (input.assigneeId) await checkAssignee(tx, actor.orgId, input.assigneeId);
    const [row] = await tx.run(INSERT, {
      id: randomUUID(),
      orgId: actor.orgId,
      title: input.title,
      dueAt: input.dueAt ?? null,
      assigneeId: input.assigneeId ?? null,
      contactId: input.contactId ?? null,
      now,
    });
    const task = toView(row!);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'task.created', source: actor.eventSource ?? 'app', data: { task }, at: now }]);
    return task;
  });
}

/** Title, due date, assignee and contact; the spec has no task.updated event, so none is emitted. */
export async function updateTask(db: Db, actor: InternalActor, input: TaskUpdateInput, now: Date): Promise<TaskView> {
  return db.transaction(async (tx) => {
    const cur = await requireRecord(tx, LOCK, actor.orgId, input.id, 'task');
    if (input.contactId) await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    if (input.assigneeId) await checkAssignee(tx, actor.orgId, input.assigneeId);
    const pick = <T>(sent: T | undefined, stored: T): T => (sent === undefined ? stored : sent);
    const [row] = await tx.run(UPDATE, {
      id: cur.id,
      title: input.title ?? cur.title,
      dueAt: pick<DueAt>(input.dueAt, cur.due_at),
      assigneeId: pick(input.assigneeId, cur.assignee_id),
      contactId: pick(input.contactId, cur.contact_id),
      now,
    });
    return toView(row!);
  });
}

/** Idempotent: the first completion sets completedAt and emits task.completed (`data.task`); later ones return the task as is. */
export async function completeTask(db: Db, actor: InternalActor, id: string, now: Date): Promise<TaskView> {
  return db.transaction(async (tx) => {
    const [row] = await tx.run(COMPLETE, { now, id, orgId: actor.orgId });
    if (!row) return getTask(tx, actor, id);
    const task = toView(row);
    await emitEvents(tx, [{ orgId: actor.orgId, event: 'task.completed', source: 'app', data: { task }, at: now }]);
    return task;
  });
}
