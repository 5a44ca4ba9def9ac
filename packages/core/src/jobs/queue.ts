import type { z } from 'zod';
import type { JobQueue, Jobs, SendOptions } from '../context.ts';

/** The queue's shapes are declared with the other dependencies, in context.ts (the floor): importers keep this path. */
export type { JobQueue, Jobs, SendOptions };

export function jobQueue<S extends z.ZodType<object, object>>(name: string, payload: S): JobQueue<S> {
  const queue: JobQueue<S> = {
    name,
    payload,
    parse: (data) => payload.parse(data),
    send: (jobs, db, data, options) => jobs.send(db, queue, data, options),
    sendMany: (jobs, db, data) => jobs.sendMany(db, queue, data),
  };
  return queue;
}

/**
 * The queue as a request sees it: every job it queues carries the request's id as `requestId` in its data, so that a
 * job found in the queue (or failed there) leads back to the request's log lines. Payload schemas ignore the field.
 */
export function jobsOfRequest(jobs: Jobs, requestId: string): Jobs {
  return {
    send: (db, queue, data, options) => jobs.send(db, queue, { ...data, requestId }, options),
    sendMany: (db, queue, data) =>
      jobs.sendMany(
        db,
        queue,
        data.map((d) => ({ ...d, requestId })),
      ),
    wake: (queue) => jobs.wake(queue),
  };
}
