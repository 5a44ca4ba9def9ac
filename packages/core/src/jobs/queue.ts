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
