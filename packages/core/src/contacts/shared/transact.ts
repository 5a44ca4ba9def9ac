import type { Db, TxDb } from '@leadwire/db';
import { AppError, errors } from '../../errors.ts';

/**
 * Runs `fn` in a transaction. Domain errors pass through untouched; anything else (a timeout, a lost connection) is
 * the spec's `Failed to save contact`, with the original kept as the cause for the logs.
 */
export async function transact<T>(db: Db, fn: (tx: TxDb) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(fn);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw errors.saveFailed(err);
  }
}
