import { z } from 'zod';
import { text } from '../validation/index.ts';
import { PageFields, pageOf } from '../records/pagination.ts';
import { TaskView } from '../events/records.ts';

// The record's wire shape is the event payload's too, so it is defined once, below the resources, in events/.
export { TaskView };

const Title = text(500).min(1, 'title must not be empty');
const DueAt = z.iso.datetime({ offset: true, message: 'dueAt must be an ISO 8601 date-time' }).meta({ example: '2026-12-01T09:00:00Z' });

export const TaskCreateInput = z.object({
  title: Title,
  dueAt: DueAt.nullish(),
  assigneeId: z.uuid().nullish().meta({ description: 'An active user of your organization.' }),
  contactId: z.uuid().nullish().meta({ description: 'A live contact of your organization.' }),
});
export type TaskCreateInput = z.infer<typeof TaskCreateInput>;

export const TaskUpdateInput = z.object({
  id: z.uuid({ message: 'id must be a task id (UUID)' }),
  title: Title.optional(),
  dueAt: DueAt.nullish().meta({ description: 'null clears the due date.' }),
  assigneeId: z.uuid().nullish().meta({ description: 'null unassigns.' }),
  contactId: z.uuid().nullish().meta({ description: 'null detaches the task from its contact.' }),
});
export type TaskUpdateInput = z.infer<typeof TaskUpdateInput>;

export const TaskIdInput = z.object({ id: z.uuid({ message: 'id must be a task id (UUID)' }) });

export const TaskListInput = z.object({
  contactId: z.uuid().optional(),
  assigneeId: z.uuid().optional(),
  status: z.enum(['open', 'completed']).optional().meta({ description: 'Both when omitted.' }),
  ...PageFields,
});
export type TaskListInput = z.infer<typeof TaskListInput>;

export const TaskPage = pageOf(TaskView);
