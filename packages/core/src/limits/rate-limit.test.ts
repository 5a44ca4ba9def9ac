import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { PUBLIC_API_PER_MINUTE } from './plans.ts';
import { enforceRateLimit, rateHeaders } from './rate-limit.ts';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const windowEndingIn = (ms: number, count: number) => ({ count, resetAt: new Date(NOW + ms) });

describe('rateHeaders', () => {
  it('reports the limit and what is left after this request', () => {
    expect(rateHeaders(windowEndingIn(30_000, 1), 600, NOW)).toEqual({
      'x-ratelimit-limit': 600,
      'x-ratelimit-remaining': 599,
      'x-ratelimit-reset': 30,
    });
    expect(rateHeaders(windowEndingIn(30_000, 600), 600, NOW)['x-ratelimit-remaining']).toBe(0);
  });

  it('never reports a negative remainder once over the limit', () => {
    expect(rateHeaders(windowEndingIn(30_000, 601), 600, NOW)['x-ratelimit-remaining']).toBe(0);
    expect(rateHeaders(windowEndingIn(30_000, 10_000), 600, NOW)['x-ratelimit-remaining']).toBe(0);
  });

  it('gives reset as whole seconds until the window ends, rounded up, between 1 and 60', () => {
    const reset = (ms: number) => rateHeaders(windowEndingIn(ms, 1), 600, NOW)['x-ratelimit-reset'];
    expect(reset(60_000)).toBe(60);
    expect(reset(59_001)).toBe(60);
    expect(reset(59_000)).toBe(59);
    expect(reset(1_500)).toBe(2);
    expect(reset(1)).toBe(1);
    // A window that has just ended (clock skew between processes) still tells the client to wait a moment, never 0.
    expect(reset(0)).toBe(1);
    expect(reset(-5_000)).toBe(1);
    for (let ms = -1000; ms <= 60_000; ms += 137) {
      expect(Number.isInteger(reset(ms))).toBe(true);
    }
  });

  it('is a delta in seconds, never an epoch timestamp', () => {
    const real = rateHeaders({ count: 1, resetAt: new Date(NOW + 45_000) }, 600, NOW);
    expect(real['x-ratelimit-reset']).toBeGreaterThanOrEqual(44);
    expect(real['x-ratelimit-reset']).toBeLessThanOrEqual(46);
  });
});

describe('enforceRateLimit', () => {
  const collect = () => {
    const headers = new Map<string, string | number>();
    return { headers, set: (name: string, value: string | number) => void headers.set(name, value) };
  };

  it('sets the three headers and lets the request through up to and including the limit', () => {
    for (const count of [1, 300, PUBLIC_API_PER_MINUTE]) {
      const { headers, set } = collect();
      expect(() => enforceRateLimit({ count, resetAt: new Date(NOW + 20_000) }, PUBLIC_API_PER_MINUTE, set, new Date(NOW))).not.toThrow();
      expect(headers.get('x-ratelimit-limit')).toBe(600);
      expect(headers.get('x-ratelimit-remaining')).toBe(600 - count);
      expect(headers.get('x-ratelimit-reset')).toBe(20);
      expect(headers.has('retry-after')).toBe(false);
    }
  });

  it('throws 429 rate_limited past the limit, after setting the headers and retry-after equal to reset', () => {
    const { headers, set } = collect();
    let thrown: unknown;
    try {
      enforceRateLimit({ count: 601, resetAt: new Date(NOW + 12_400) }, 600, set, new Date(NOW));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).status).toBe(429);
    expect((thrown as AppError).code).toBe('rate_limited');
    expect(headers.get('x-ratelimit-remaining')).toBe(0);
    expect(headers.get('x-ratelimit-limit')).toBe(600);
    expect(headers.get('retry-after')).toBe(headers.get('x-ratelimit-reset'));
    expect(headers.get('retry-after')).toBe(13);
    expect((thrown as AppError).message).toContain(String(headers.get('retry-after')));
  });

  it('uses the limit it is given', () => {
    const { headers, set } = collect();
    expect(() => enforceRateLimit({ count: 61, resetAt: new Date(NOW + 1000) }, 60, set, new Date(NOW))).toThrow(AppError);
    expect(headers.get('x-ratelimit-limit')).toBe(60);
  });

  it('keeps the public API at 600 per minute per key (spec Limits)', () => {
    expect(PUBLIC_API_PER_MINUTE).toBe(600);
  });
});
