export { renderMetrics } from './collect.ts';
export {
  captureSubmissions,
  countAttempt,
  httpDuration,
  pageViews,
  httpRequests,
  metricsRegistry,
  refusals,
  refusalsHeld,
  UNMATCHED_ROUTE,
} from './registry.ts';
