import type { Deps } from '../context.ts';
import type { JobDefinition } from '../jobs/boss.ts';
import { issueResetToken, ResetRequestPayload, resetRequestQueue } from './password.service.ts';

export { ResetRequestPayload };

/**
 * `accounts.password-reset`: one reset request, queued by the request itself. Issuing the token and queueing its
 * email commit together, so a failed run left nothing behind and its retry issues exactly one token. Rows (holding the
 * email address asked about) go 15 minutes after they finish.
 */
export function passwordResetJob(deps: Deps): JobDefinition<ResetRequestPayload> {
  return {
    queue: resetRequestQueue.name,
    batchSize: 10,
    retryLimit: 3,
    retryDelay: 10,
    queueOptions: { notify: true, deleteAfterSeconds: 15 * 60 },
    parse: resetRequestQueue.parse,
    // The token's hour (and the hourly cap) count from when the worker issues it, on the application's clock.
    handle: ({ email }) => issueResetToken(deps.db, { jobs: deps.jobs, appUrl: deps.config.APP_URL }, email, deps.clock.now()),
  };
}
