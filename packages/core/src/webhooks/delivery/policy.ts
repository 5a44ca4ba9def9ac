/**
 * The delivery rules of the spec ("Events > Delivery", "Limits") as numbers, in one place. Times are milliseconds and
 * always measured on `deps.clock`.
 */

/** 5 attempts in total: attempt n+1 is due about this long after the FIRST attempt started (30 s, 2, 8 and 32 min). */
export const RETRY_OFFSETS_MS = [30_000, 2 * 60_000, 8 * 60_000, 32 * 60_000] as const;
export const MAX_ATTEMPTS = RETRY_OFFSETS_MS.length + 1;

/**
 * Each retry's offset is spread at random by up to this fraction either way (27-33 s, 108-132 s, 432-528 s,
 * 1728-2112 s), so deliveries that failed together (a receiver's outage) come back spread out rather than in the same
 * millisecond. 10% keeps the spec's "about" and the retries in order: no two ranges overlap.
 */
export const RETRY_JITTER = 0.1;

/** Failed automatic attempts in a row that disable an endpoint. */
export const DISABLE_AFTER_FAILURES = 10;

/** Deliveries per workspace per UTC hour, counted across processes in rate_limit_counters. */
export const HOURLY_DELIVERY_LIMIT = 1_000;

/** The spec's receiver time-out: any 2xx within it succeeds. */
export const RECEIVER_TIMEOUT_MS = 10_000;

/**
 * How long an attempt may be held by a live worker before the sweeper takes it back: the receiver time-out plus room
 * to record the outcome (retried while PostgreSQL is briefly away). Only a worker that lost track of an attempt (or
 * whose lock vanished in a server restart) is ever reclaimed this way; a dead worker is noticed at once (worker-lock.ts).
 */
export const ATTEMPT_LEASE_MS = RECEIVER_TIMEOUT_MS + 20_000;

/**
 * How long a queued attempt may wait for a worker to take it before it is queued again (its old job then finds a new
 * lease token and is dropped). Long enough that a busy queue is not flooded with duplicates of its own backlog.
 */
export const QUEUE_LEASE_MS = 60_000;

/** The start of the receiver's answer kept in the log. */
export const RESPONSE_BODY_CHARS = 1_024;

export const SKIP_DISABLED = 'endpoint disabled';
/** The reason on a delivery its endpoint's filter kept back (state and log outcome `filtered`). */
export const SKIP_FILTERED = "filtered out by the endpoint's filter";
export const SKIP_LIMIT = `workspace over ${HOURLY_DELIVERY_LIMIT.toLocaleString('en-US')} deliveries per hour`;

/**
 * When the attempt after `attemptsMade` attempts is due, or null when none is left. `draw` is in [0, 1) (deps.random):
 * 0 is the earliest, 0.5 the nominal offset.
 */
export function nextAttemptAt(firstAttemptAt: Date, attemptsMade: number, draw: number): Date | null {
  const offset = RETRY_OFFSETS_MS[attemptsMade - 1];
  if (offset === undefined) return null;
  return new Date(firstAttemptAt.getTime() + Math.round(offset * (1 + RETRY_JITTER * (2 * draw - 1))));
}

/** The fixed UTC hour a delivery created at `now` counts in. */
export function hourWindow(now: Date): Date {
  const start = new Date(now);
  start.setUTCMinutes(0, 0, 0);
  return start;
}
