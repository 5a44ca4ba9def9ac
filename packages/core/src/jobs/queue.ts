import type { Db } from '@leadwire/db';
import type { z } from 'zod';

export interface SendOptions {
  startAfter?: Date | number;
}

/**
 * A queue with the payload its jobs carry. Each job module exports its own (svix's QueueTask habit): a send names a
 * queue by this object, never by a string, so it cannot name a queue that does not exist nor carry another's payload.
 */
export interface JobQueue<S extends z.ZodType<object, object> = z.ZodType<object, object>> {
  /** The pg-boss queue name. */
  readonly name: string;
  /** The payload's schema; the worker parses each job's data with it. */
  readonly payload: S;
  /** Reads a job's data as the worker receives it. */
  parse(this: void, data: unknown): z.output<S>;
  /** Queues one job on the caller's handle (see `Jobs.send`). */
  send(this: void, jobs: Jobs, db: Db, data: z.input<S>, options?: SendOptions): Promise<void>;
  /** Queues many jobs of this queue in one statement on the caller's handle. */
  sendMany(this: void, jobs: Jobs, db: Db, data: readonly z.input<S>[]): Promise<void>;
}

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
 * The job queue as the domain sees it. `send` takes the caller's database handle (a transaction, or the ORM's entity manager) so
 * that a job enqueued inside a transaction exists exactly when that transaction commits.
 */
export interface Jobs {
  send<S extends z.ZodType<object, object>>(db: Db, queue: JobQueue<S>, data: NoInfer<z.input<S>>, options?: SendOptions): Promise<void>;
  /** Many jobs of one queue in one statement, on the caller's handle like `send`. */
  sendMany<S extends z.ZodType<object, object>>(db: Db, queue: JobQueue<S>, data: readonly NoInfer<z.input<S>>[]): Promise<void>;
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
  };
}
