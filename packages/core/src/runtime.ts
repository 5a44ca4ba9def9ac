/*
 * `@leadwire/core/runtime`: what a process needs to compose itself (apps/server/src/compose.ts, main.ts, jobs.ts):
 * the job queue and every job definition, the webhook pump, the shared in-memory refusals and their change feed, and
 * the process-wide settings of password hashing, and what the operator CLI does (apps/server/src/admin.ts). Request handling goes through the routers (the package's index) and
 * the hand-written routes (`@leadwire/core/surfaces`).
 */
export { BossRuntime, type JobDefinition } from './jobs/boss.ts';
export { cleanupJob } from './jobs/cleanup.ts';
export { rollupJob } from './activity/rollup-job.ts';
export { refreshWildcards } from './webhooks/endpoints/service.ts';
export { passwordResetJob } from './accounts/reset-job.ts';
export { setPasswordHashCost, setPasswordHashSlots } from './accounts/passwords.ts';
export { bootstrap, createApiKey, userOfEmail } from './accounts/service.ts';
export { purgeContactsJob } from './contacts/app/purge-job.ts';
export { sendMailJob } from './mail/send-job.ts';
export { adjustScoreJob } from './contacts/shared/adjust-score-job.ts';
export { deliverJob, pumpOf, type DeliveryPump } from './webhooks/delivery/pump.ts';
export { listenForWork, notifyWorkers, PUMP_WAKE_CHANNEL } from './webhooks/delivery/wake.ts';
export { type AttemptInfo, type AttemptTracer, setAttemptTracer } from './webhooks/delivery/attempt-trace.ts';
export { workflowRunJob } from './workflows/job.ts';
export { watchKeyChanges } from './auth/key-changes.ts';
export { keyGuardOf } from './limits/key-guard.ts';
export { apiUsageOf, flushApiUsage, startApiUsageFlush } from './limits/api-usage.ts';
export { refusalPacerOf } from './limits/refusal-pacer.ts';
export { currentRequestId, requestIdMixin, withRequestId } from './http/request-scope.ts';
export { systemResolver, type Resolver } from './webhooks/transport/resolver.ts';
export {
  captureSubmissions,
  countAttempt,
  httpDuration,
  httpRequests,
  metricsRegistry,
  pageViews,
  refusals,
  refusalsHeld,
  renderMetrics,
  UNMATCHED_ROUTE,
} from './metrics/index.ts';
