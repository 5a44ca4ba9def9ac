export { renderMetrics } from './collect.ts';
export { countAttempt, httpDuration, httpRequests, metricsRegistry, refusals, UNMATCHED_ROUTE } from './registry.ts';
