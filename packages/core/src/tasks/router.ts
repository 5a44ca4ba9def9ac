import { internalProcedure } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { TaskCreateInput, TaskIdInput, TaskListInput, TaskPage, TaskUpdateInput, TaskView } from './schemas.ts';
import { completeTask, createTask, getTask, listTasks, updateTask } from './service.ts';

const tags = ['Tasks'];

/** Every member creates, assigns and completes tasks. */
export const tasksRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/tasks', tags, summary: 'Tasks, newest first, filtered by contact, assignee or status' },
      errorCodes: [...INTERNAL_ERRORS, 'invalid_cursor'],
    })
    .input(TaskListInput)
    .output(TaskPage)
    .query(({ ctx, input }) => listTasks(ctx.db, ctx.actor, input)),

  get: internalProcedure
    .meta({ openapi: { method: 'GET', path: '/tasks/{id}', tags, summary: 'A task' }, errorCodes: [...INTERNAL_ERRORS, 'not_found'] })
    .input(TaskIdInput)
    .output(TaskView)
    .query(({ ctx, input }) => getTask(ctx.db, ctx.actor, input.id)),

  create: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/tasks', tags, summary: 'Create a task (emits task.created)' },
      successStatus: 201,
      errorCodes: [...INTERNAL_ERRORS, 'not_found', 'assignee_inactive'],
    })
    .input(TaskCreateInput)
    .output(TaskView)
    .mutation(({ ctx, input }) => createTask(ctx.db, ctx.actor, input, ctx.deps.clock.now())),

  update: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/tasks/{id}/update', tags, summary: 'Change title, due date, assignee or contact' },
      errorCodes: [...INTERNAL_ERRORS, 'not_found', 'assignee_inactive'],
    })
    .input(TaskUpdateInput)
    .output(TaskView)
    .mutation(({ ctx, input }) => updateTask(ctx.db, ctx.actor, input, ctx.deps.clock.now())),

  complete: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/tasks/{id}/complete',
        tags,
        summary: 'Complete a task (emits task.completed once; repeats are no-ops)',
      },
      errorCodes: [...INTERNAL_ERRORS, 'not_found'],
    })
    .input(TaskIdInput)
    .output(TaskView)
    .mutation(({ ctx, input }) => completeTask(ctx.db, ctx.actor, input.id, ctx.deps.clock.now())),
});
