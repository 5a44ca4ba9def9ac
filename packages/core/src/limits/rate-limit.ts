import type { RateWindow } from '../auth/authenticate.ts';
import { errors } from '../errors.ts';

export interface RateHeaders {
  'x-ratelimit-limit': number;
  'x-ratelimit-remaining': number;
  /** Seconds until the current window ends and the allowance is restored (delta seconds, never an epoch). */
  'x-ratelimit-reset': number;
}

export function rateHeaders(window: RateWindow, limit: number, now = Date.now()): RateHeaders {
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
): void {
  const headers = rateHeaders(window, limit);
  for (const [name, value] of Object.entries(headers)) setHeader(name, value);
  if (window.count > limit) {
    setHeader('retry-after', headers['x-ratelimit-reset']);
    throw errors.rateLimited(headers['x-ratelimit-reset']);
  }
}

/**
 * Several windows at once (Internal keys: per minute and per day). The headers describe the window closest to running
 * out, and the request is refused when any window is spent.
 */
export function enforceRateLimits(
  windows: readonly { window: RateWindow; limit: number }[],
  setHeader: (name: string, value: string | number) => void,
): void {
  // A spent window that reopens last decides: a key out of its daily allowance must not be told to retry in a minute.
  const spent = windows.filter((w) => w.window.count > w.limit).sort((a, b) => b.window.resetAt.getTime() - a.window.resetAt.getTime());
  const tightest =
    spent[0] ??
    [...windows].sort(
      (a, b) => a.limit - a.window.count - (b.limit - b.window.count) || b.window.resetAt.getTime() - a.window.resetAt.getTime(),
    )[0];
  if (tightest) enforceRateLimit(tightest.window, tightest.limit, setHeader);
}
