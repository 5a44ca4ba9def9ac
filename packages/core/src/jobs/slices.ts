import { sql, type Db, type Statement } from '@leadwire/db';

/**
 * Deletes go in slices so that a backlog (say, after the workers were down for a day, or the first run after a
 * retention bound was lowered) never becomes one long statement holding locks that the request path's idempotency
 * claims and rate-limit hits would queue behind, nor one transaction whose dead rows vacuum cannot reclaim until it ends.
 */
export const SLICE = 5_000;

/** The slice as a literal, as the statements always had it: the planner sizes the scan for it. */
export const LIMIT = sql.lit(SLICE);
export const GONE = sql<number>`count(*)::int`.as('n');

/** Runs `statement` (which deletes at most SLICE rows and answers how many) until a slice comes back short. */
export async function deleteInSlices<P>(db: Db, statement: Statement<P, { n: number }>, params: P): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await db.run(statement, params);
    const n = row?.n ?? 0;
    total += n;
    if (n < SLICE) return total;
  }
}
