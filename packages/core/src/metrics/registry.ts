import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The process's counters, one registry per process (a process is one role of one deployment). Services increment them
 * directly; the values that are read on a scrape (pool, backlog) are gathered in collect.ts instead. Every label takes
 * values from a short list fixed by the code, never from a request, an organization or a key: see docs/operating.md,
 * "Metrics", for the list and its bounds.
 */
export const metricsRegistry = new Registry();

// The runtime's own figures (event-loop lag, heap, GC, open handles): the first thing to read when latency climbs.
collectDefaultMetrics({ register: metricsRegistry });

/** Route labels are route templates; a path no route claimed is this one value. */
export const UNMATCHED_ROUTE = 'unmatched';

export const httpRequests = new Counter({
  name: 'leadwire_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
});

export const httpDuration = new Histogram({
  name: 'leadwire_http_request_duration_seconds',
  help: 'Time from a request arriving to its answer being written, by method and route template',
  labelNames: ['method', 'route'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

export const webhookAttempts = new Counter({
  name: 'leadwire_webhook_attempts_total',
  help: 'Webhook delivery attempts recorded, by outcome (succeeded, failed, blocked, skipped) and attempt number',
  labelNames: ['outcome', 'attempt'] as const,
  registers: [metricsRegistry],
});

export const refusals = new Counter({
  name: 'leadwire_refusals_total',
  help: 'Requests and connections refused by a limit or as abuse, by reason (a short fixed list: docs/operating.md)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const commitToAttempt = new Histogram({
  name: 'leadwire_webhook_commit_to_attempt_seconds',
  help: 'Time from an event being written (its timestamp, in the writing transaction) to the start of each automatic delivery attempt of it, by attempt number',
  labelNames: ['attempt'] as const,
  // A first attempt takes a pump round and a queue hop (tens of ms); retries wait their schedule (up to hours).
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 21600, 86400],
  registers: [metricsRegistry],
});

export const refusalsHeld = new Counter({
  name: 'leadwire_refusals_held_total',
  help: "Refusals held before they were answered, because the client's address had more than its free refusals this second",
  registers: [metricsRegistry],
});

/** Attempt numbers past the policy's last (`max`: manual replays of an exhausted delivery) share one label. */
export function attemptLabel(attempt: number, max: number): string {
  return attempt > max ? `${max + 1}+` : String(Math.max(0, Math.trunc(attempt)));
}

const OUTCOMES = new Set(['succeeded', 'failed', 'blocked', 'skipped']);

/** One recorded attempt. */
export function countAttempt(outcome: string, attempt: number, max: number): void {
  webhookAttempts.inc({ outcome: OUTCOMES.has(outcome) ? outcome : 'other', attempt: attemptLabel(attempt, max) });
}

export const pageViews = new Counter({
  name: 'leadwire_page_views_total',
  help: 'Page views posted by the tracking snippet: accepted, or refused with the error code given (reason)',
  labelNames: ['outcome', 'reason'] as const,
  registers: [metricsRegistry],
});

export const captureSubmissions = new Counter({
  name: 'leadwire_capture_submissions_total',
  help: 'Lead-capture submissions: accepted, or refused with the error code given (reason)',
  labelNames: ['outcome', 'reason'] as const,
  registers: [metricsRegistry],
});

// Read replicas (docs/scaling.md): the pool label is `primary` or a replica's name (`replica1`, ...: its position in
// DATABASE_REPLICA_URLS), so its values are bounded by the configuration.
export const dbReads = new Counter({
  name: 'leadwire_db_replica_safe_reads_total',
  help: 'Replica-safe reads (docs/scaling.md) answered, by the pool that answered them: primary, replica1, ...',
  labelNames: ['pool'] as const,
  registers: [metricsRegistry],
});

export const replicaFallbacks = new Counter({
  name: 'leadwire_db_replica_fallbacks_total',
  help: 'Replica-safe reads answered by the primary instead, by reason: down, lagging, not_replayed (read-your-writes), read_failed',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});
