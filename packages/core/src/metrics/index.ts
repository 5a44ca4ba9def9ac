export { renderMetrics } from './collect.ts';
export {
  captureSubmissions,
  countAttempt,
  httpDuration,
  pageViews,
  httpRequests,
  metricsRegistry,
  refusals,
  UNMATCHED_ROUTE,
} from './registry.ts';
