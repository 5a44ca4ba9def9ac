import { passwordResetJob } from '../accounts/reset-job.ts';
import type { Deps } from '../context.ts';
import { sendMailJob } from '../mail/send-job.ts';
import { adjustScoreJob } from '../scoring/adjust-job.ts';
import type { JobDefinition } from './boss.ts';
import { cleanupJob } from './cleanup.ts';
import { purgeContactsJob } from './purge-contacts.ts';
import { deliverJob } from '../webhooks/delivery/pump.ts';
import { workflowRunJob } from '../workflows/job.ts';

/**
 * Every queue the application runs. The score-adjustment queue exists even without an adjuster configured: jobs
 * queued before the setting was removed then settle with no adjustment instead of waiting forever.
 */
export function jobDefinitions(deps: Deps): JobDefinition[] {
  return [adjustScoreJob(deps), cleanupJob(deps), purgeContactsJob(deps), sendMailJob(deps), passwordResetJob(deps), deliverJob(deps), workflowRunJob(deps)];
}
