import { z } from 'zod';
import { purgeTrash } from './lifecycle.ts';
import type { Deps } from '../../context.ts';
import { storageFor } from '../../files/storage.ts';
import type { JobDefinition } from '../../jobs/boss.ts';
import { jobQueue } from '../../jobs/queue.ts';

export const PURGE_CONTACTS_QUEUE = 'contacts.purge-trash';
/** Sent by its cron (or an operator): no payload. */
export const purgeContactsQueue = jobQueue(PURGE_CONTACTS_QUEUE, z.record(z.string(), z.unknown()));
/** Nightly at 05:00 UTC (spec "States and transitions"); pg-boss sends one job per tick across all processes. */
export const PURGE_CONTACTS_CRON = '0 5 * * *';

/**
 * `contacts.purge-trash`: deletes contacts more than 30 days in trash, with their timeline. A run that fails is
 * retried within the hour; contacts it missed are picked up by the next night anyway, and purging twice is harmless.
 */
export function purgeContactsJob(deps: Deps): JobDefinition<Record<string, unknown>> {
  return {
    queue: purgeContactsQueue.name,
    cron: PURGE_CONTACTS_CRON,
    retryLimit: 3,
    retryDelay: 600,
    queueOptions: { notify: true },
    parse: (data) => purgeContactsQueue.parse(data ?? {}),
    async handle() {
      const { contacts, events, storageKeys } = await purgeTrash(deps.db, deps.clock.now());
      // The rows are gone with their contacts; their bytes go now. A failure leaves an orphan file, never a dangling row.
      const storage = storageFor(deps.config);
      let failed = 0;
      for (const key of storageKeys) await storage.delete(key).catch(() => failed++);
      deps.log.info({ contacts, events, files: storageKeys.length, filesNotRemoved: failed }, 'trash purge done');
    },
  };
}
