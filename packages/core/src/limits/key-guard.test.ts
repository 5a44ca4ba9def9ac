import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { KeyGuard } from './key-guard.ts';
import { enforceRateLimits } from './rate-limit.ts';

const MINUTE = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number) => new Date(MINUTE + ms);
const noHeaders = () => {};

describe('KeyGuard: spent keys', () => {
  it('remembers a spent window until it ends, and forgets it then', () => {
    const g = new KeyGuard();
    g.markSpent('public:h1', { window: { count: 601, resetAt: at(60_000) }, limit: 600 });
    expect(g.spent('public:h1', at(10_000))?.limit).toBe(600);
    expect(g.spent('public:h1', at(59_999))).toBeDefined();
    expect(g.spent('public:other', at(10_000))).toBeUndefined();
    expect(g.spent('public:h1', at(60_000))).toBeUndefined();
    expect(g.sizes().spentKeys).toBe(0);
  });

  it('is filled by enforceRateLimits only when it refuses, with the window that reopens last', () => {
    const g = new KeyGuard();
    const remember = { guard: g, key: 'internal:h' };
    const minute = { window: { count: 61, resetAt: at(60_000) }, limit: 60 };
    const day = { window: { count: 10_001, resetAt: at(86_400_000) }, limit: 10_000 };
    enforceRateLimits([{ ...minute, window: { ...minute.window, count: 60 } }], noHeaders, at(0), remember);
    expect(g.spent('internal:h', at(0))).toBeUndefined();
    expect(() => enforceRateLimits([minute, day], noHeaders, at(0), remember)).toThrow(AppError);
    expect(g.spent('internal:h', at(3_600_000))?.limit).toBe(10_000);
  });
});

describe('KeyGuard: addresses presenting unknown keys', () => {
  it('throttles an address after its failures for the rest of the minute only', () => {
    const g = new KeyGuard({ failuresPerMinute: 3 });
    for (let i = 0; i < 2; i++) g.recordFailure('10.0.0.1', `bad${i}`, at(1000));
    expect(g.addressBlockedUntil('10.0.0.1', at(1000))).toBeNull();
    g.recordFailure('10.0.0.1', 'bad2', at(2000));
    expect(g.addressBlockedUntil('10.0.0.1', at(2000))).toEqual(at(60_000));
    expect(g.addressBlockedUntil('10.0.0.2', at(2000))).toBeNull();
    expect(g.addressBlockedUntil(undefined, at(2000))).toBeNull();
    expect(g.addressBlockedUntil('10.0.0.1', at(60_000))).toBeNull();
    // Failures of an earlier minute do not carry over.
    g.recordFailure('10.0.0.1', 'bad3', at(61_000));
    expect(g.addressBlockedUntil('10.0.0.1', at(61_000))).toBeNull();
  });

  it('lets keys that authenticated recently pass a throttled address, until one fails', () => {
    const g = new KeyGuard({ failuresPerMinute: 1, goodForMs: 120_000 });
    g.recordSuccess('good', at(0));
    g.recordFailure('10.0.0.1', 'bad', at(0));
    expect(g.addressBlockedUntil('10.0.0.1', at(0))).not.toBeNull();
    expect(g.isKnownGood('good', at(1000))).toBe(true);
    expect(g.isKnownGood('bad', at(1000))).toBe(false);
    expect(g.isKnownGood('good', at(120_000))).toBe(false);
    g.recordSuccess('good', at(1000));
    g.recordFailure('10.0.0.1', 'good', at(2000));
    expect(g.isKnownGood('good', at(2000))).toBe(false);
  });
});

describe('KeyGuard: bounded memory', () => {
  it('keeps at most maxEntries per table under a flood of distinct addresses, keys and spent windows', () => {
    const g = new KeyGuard({ maxEntries: 100, failuresPerMinute: 2 });
    for (let i = 0; i < 5_000; i++) {
      g.recordFailure(`10.0.${i >> 8}.${i & 255}`, `k${i}`, at(0));
      g.recordSuccess(`g${i}`, at(0));
      g.markSpent(`public:s${i}`, { window: { count: 601, resetAt: at(60_000) }, limit: 600 });
    }
    expect(g.sizes()).toEqual({ spentKeys: 100, addresses: 100, goodKeys: 100 });
    // The newest entries are the ones kept.
    expect(g.spent('public:s4999', at(0))).toBeDefined();
    expect(g.spent('public:s0', at(0))).toBeUndefined();
  });

  it('keeps an address that is still failing when older ones are evicted', () => {
    const g = new KeyGuard({ maxEntries: 3, failuresPerMinute: 2 });
    g.recordFailure('flooder', 'a', at(0));
    g.recordFailure('x', 'b', at(0));
    g.recordFailure('y', 'c', at(0));
    g.recordFailure('flooder', 'd', at(0));
    g.recordFailure('z', 'e', at(0));
    expect(g.addressBlockedUntil('flooder', at(0))).not.toBeNull();
  });
});
