import type { Db } from '@leadwire/db';

/**
 * The job queue as the domain sees it. `send` takes the caller's database handle (a transaction, or the ORM's entity manager) so
 * that a job enqueued inside a transaction exists exactly when that transaction commits.
 */
export interface Jobs {
  send(db: Db, queue: string, data: object, options?: { startAfter?: Date | number }): Promise<void>;
  /** Many jobs of one queue in one statement, on the caller's handle like `send`. */
  sendMany(db: Db, queue: string, data: readonly object[]): Promise<void>;
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
