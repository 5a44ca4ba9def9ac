import type { RateWindow } from './window.ts';
import { errors } from '../errors.ts';
import { refusals } from '../metrics/registry.ts';
import type { KeyGuard, KeySighting, SpentWindow } from './key-guard.ts';

export interface RateHeaders {
  'x-ratelimit-limit': number;
  'x-ratelimit-remaining': number;
  /** Seconds until the current window ends and the allowance is restored (delta seconds, never an epoch). */
  'x-ratelimit-reset': number;
}

export function rateHeaders(window: RateWindow, limit: number, now: number): RateHeaders {
  return {
    'x-ratelimit-limit': limit,
    'x-ratelimit-remaining': Math.max(0, limit - window.count),
    'x-ratelimit-reset': Math.max(1, Math.ceil((window.resetAt.getTime() - now) / 1000)),
  };
}

/** Sets the headers on every response and throws rate_limited once the window is spent. */
export function enforceRateLimit(
  window: RateWindow,
  limit: number,
  setHeader: (name: string, value: string | number) => void,
  now: Date,
): void {
  const headers = rateHeaders(window, limit, now.getTime());
  for (const [name, value] of Object.entries(headers)) setHeader(name, value);
  if (window.count > limit) {
    setHeader('retry-after', headers['x-ratelimit-reset']);
    refusals.inc({ reason: 'rate_limited' });
    throw errors.rateLimited(headers['x-ratelimit-reset']);
  }
}

/**
 * Several windows at once (Internal keys: per minute and per day). The headers describe the window closest to running
 * out, and the request is refused when any window is spent. A refused key is remembered by the process's guard until
 * that window ends, so its next requests are refused without a round trip.
 */
export function enforceRateLimits(
  windows: readonly SpentWindow[],
  setHeader: (name: string, value: string | number) => void,
  now: Date,
  remember?: { guard: KeyGuard; key: KeySighting },
): void {
  // A spent window that reopens last decides: a key out of its daily allowance must not be told to retry in a minute.
  const spent = windows.filter((w) => w.window.count > w.limit).sort((a, b) => b.window.resetAt.getTime() - a.window.resetAt.getTime());
  const tightest =
    spent[0] ??
    [...windows].sort(
      (a, b) => a.limit - a.window.count - (b.limit - b.window.count) || b.window.resetAt.getTime() - a.window.resetAt.getTime(),
    )[0];
  if (spent[0] && remember) remember.guard.markSpent(remember.key, spent[0]);
  if (tightest) enforceRateLimit(tightest.window, tightest.limit, setHeader, now);
}
