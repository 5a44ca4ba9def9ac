import type { Deps } from '@leadwire/core';
import {
  adjustScoreJob,
  cleanupJob,
  deliverJob,
  type JobDefinition,
  passwordResetJob,
  purgeContactsJob,
  rollupJob,
  sendMailJob,
  workflowRunJob,
} from '@leadwire/core/runtime';

/**
 * Every queue the application runs: composed here, in the process, because a job list inside core would make the
 * queue runtime import every resource. The score-adjustment queue exists even without an adjuster configured: jobs
 * queued before the setting was removed then settle with no adjustment instead of waiting forever.
 */
export function jobDefinitions(deps: Deps): JobDefinition[] {
  return [
    adjustScoreJob(deps),
    cleanupJob(deps),
    purgeContactsJob(deps),
    rollupJob(deps),
    sendMailJob(deps),
    passwordResetJob(deps),
    deliverJob(deps),
    workflowRunJob(deps),
  ];
}
