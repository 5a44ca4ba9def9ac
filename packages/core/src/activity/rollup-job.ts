import type { Db } from '@leadwire/db';
import { z } from 'zod';
import type { Deps } from '../context.ts';
import type { JobDefinition } from '../jobs/boss.ts';
import { jobQueue } from '../jobs/queue.ts';
import { ROLL_UP } from './sql.ts';

export const ROLLUP_QUEUE = 'activity.rollup';
export const rollupQueue = jobQueue(ROLLUP_QUEUE, z.record(z.string(), z.unknown()));
/** Every minute: the overview's deliveries, submissions and page views are at most this late. */
export const ROLLUP_CRON = '* * * * *';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Recomputes the current and the previous UTC hour, and the current UTC day's visitors (with the previous day's in the
 * first hour after midnight, so a day's last views are counted once it is over). A delivery can change state for about
 * 35 minutes after it is created (its last retry), so two hours hold every change; older hours are final.
 */
export async function runActivityRollup(db: Db, now: Date): Promise<{ written: number; deleted: number }> {
  const t = now.getTime();
  const to = new Date(t - (t % HOUR_MS) + HOUR_MS);
  const from = new Date(to.getTime() - 2 * HOUR_MS);
  const dayFrom = new Date(from.getTime() - (from.getTime() % DAY_MS));
  const [row] = await db.run(ROLL_UP, { from, to, dayFrom });
  return { written: row?.written ?? 0, deleted: row?.deleted ?? 0 };
}

/** `activity.rollup`: one job per cron tick across all processes. */
export function rollupJob(deps: Deps): JobDefinition<Record<string, unknown>> {
  return {
    queue: rollupQueue.name,
    cron: ROLLUP_CRON,
    // The next tick recomputes the same hours: a failed run needs no retry of its own.
    retryLimit: 0,
    queueOptions: { notify: true },
    parse: (data) => rollupQueue.parse(data ?? {}),
    async handle() {
      const result = await runActivityRollup(deps.db, deps.clock.now());
      deps.log.debug({ result }, 'activity rollup done');
    },
  };
}
