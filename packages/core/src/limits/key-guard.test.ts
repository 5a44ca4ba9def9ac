import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { type Admission, KeyGuard, type KeySighting } from './key-guard.ts';
import { enforceRateLimits } from './rate-limit.ts';

const MINUTE = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number) => new Date(MINUTE + ms);
const noHeaders = () => {};
const spentMinute = { window: { count: 601, resetAt: at(60_000) }, limit: 600 };

function liveGuard(opts: ConstructorParameters<typeof KeyGuard>[0] = {}): KeyGuard {
  const g = new KeyGuard(opts);
  g.setLive(true);
  return g;
}

const sighting = (g: KeyGuard, hash: string, more: Partial<KeySighting> = {}): KeySighting => ({
  guardKey: `public:${hash}`,
  keyHash: hash,
  ownerId: 'owner-1',
  expiresAt: null,
  generation: g.generation,
  ...more,
});

describe('KeyGuard: spent keys', () => {
  it('remembers a spent window until it ends, and forgets it then', () => {
    const g = liveGuard();
    g.markSpent(sighting(g, 'h1'), spentMinute);
    expect(g.spent('public:h1', at(10_000))?.limit).toBe(600);
    expect(g.spent('public:h1', at(59_999))).toBeDefined();
    expect(g.spent('public:other', at(10_000))).toBeUndefined();
    expect(g.spent('public:h1', at(60_000))).toBeUndefined();
    expect(g.sizes().spentKeys).toBe(0);
  });

  it('is filled by enforceRateLimits only when it refuses, with the window that reopens last', () => {
    const g = liveGuard();
    const remember = { guard: g, key: { ...sighting(g, 'h'), guardKey: 'internal:h' } };
    const minute = { window: { count: 61, resetAt: at(60_000) }, limit: 60 };
    const day = { window: { count: 10_001, resetAt: at(86_400_000) }, limit: 10_000 };
    enforceRateLimits([{ ...minute, window: { ...minute.window, count: 60 } }], noHeaders, at(0), remember);
    expect(g.spent('internal:h', at(0))).toBeUndefined();
    expect(() => enforceRateLimits([minute, day], noHeaders, at(0), remember)).toThrow(AppError);
    expect(g.spent('internal:h', at(3_600_000))?.limit).toBe(10_000);
  });

  it('stops refusing a key once it expires, even inside its spent window', () => {
    const g = liveGuard();
    g.markSpent(sighting(g, 'h', { expiresAt: at(30_000) }), spentMinute);
    expect(g.spent('public:h', at(29_999))).toBeDefined();
    expect(g.spent('public:h', at(30_000))).toBeUndefined();
  });

  it('forgets a key revoked, and every key of a user whose credentials changed, on both surfaces', () => {
    const g = liveGuard();
    g.markSpent(sighting(g, 'a'), spentMinute);
    g.markSpent({ ...sighting(g, 'a'), guardKey: 'internal:a' }, spentMinute);
    g.markSpent(sighting(g, 'b'), spentMinute);
    g.markSpent(sighting(g, 'c', { ownerId: 'owner-2' }), spentMinute);
    g.keyChanged('a');
    expect([g.spent('public:a', at(0)), g.spent('internal:a', at(0))]).toEqual([undefined, undefined]);
    expect(g.spent('public:b', at(0))).toBeDefined();
    g.ownerChanged('owner-1', false);
    expect(g.spent('public:b', at(0))).toBeUndefined();
    expect(g.spent('public:c', at(0))).toBeDefined();
  });

  it('does not remember what a look-up saw if a change to that key or its owner was heard while it ran', () => {
    const g = liveGuard();
    const seen = sighting(g, 'h');
    g.keyChanged('other');
    g.ownerChanged('owner-2', false);
    g.markSpent(seen, spentMinute);
    expect(g.spent('public:h', at(0))).toBeDefined();
    for (const change of [() => g.keyChanged('h'), () => g.ownerChanged('owner-1', false), () => g.forgetRefusals()]) {
      const during = sighting(g, 'h');
      change();
      g.markSpent(during, spentMinute);
      expect(g.spent('public:h', at(0))).toBeUndefined();
    }
    // A hash not found: voided by a change to it, or by a reactivation (which may revive any key), not by others.
    let stale = g.generation;
    g.ownerChanged('someone', false);
    g.recordBad('x', stale, at(0));
    expect(g.isKnownBad('x', at(0))).toBe(true);
    for (const change of [() => g.keyChanged('y'), () => g.ownerChanged('someone', true)]) {
      stale = g.generation;
      change();
      g.recordBad('y', stale, at(0));
      expect(g.isKnownBad('y', at(0))).toBe(false);
    }
  });

  it('does not remember a look-up older than the changes it keeps', () => {
    const g = liveGuard();
    const seen = sighting(g, 'h');
    for (let i = 0; i < 300; i++) g.keyChanged(`other${i}`);
    g.markSpent(seen, spentMinute);
    expect(g.spent('public:h', at(0))).toBeUndefined();
  });
});

describe('KeyGuard: only while every change is heard', () => {
  it('answers nothing from memory before the channel is live, nor while it is down, and forgets on both edges', () => {
    const g = new KeyGuard();
    g.markSpent(sighting(g, 'h'), spentMinute);
    g.recordBad('bad', g.generation, at(0));
    expect([g.spent('public:h', at(0)), g.isKnownBad('bad', at(0))]).toEqual([undefined, false]);

    g.setLive(true);
    g.markSpent(sighting(g, 'h'), spentMinute);
    g.recordBad('bad', g.generation, at(0));
    expect([g.spent('public:h', at(0))?.limit, g.isKnownBad('bad', at(0))]).toEqual([600, true]);

    g.setLive(false);
    expect([g.spent('public:h', at(0)), g.isKnownBad('bad', at(0))]).toEqual([undefined, false]);
    // Back up: what was remembered before the gap is gone (changes made during it were never heard).
    g.setLive(true);
    expect([g.spent('public:h', at(0)), g.isKnownBad('bad', at(0))]).toEqual([undefined, false]);
    expect(g.sizes()).toMatchObject({ spentKeys: 0, badKeys: 0 });
  });
});

describe('KeyGuard: keys the database did not find', () => {
  it('remembers them for rememberMs, until the hash is created, or until a user is reactivated', () => {
    const g = liveGuard({ rememberMs: 120_000 });
    g.recordBad('bad', g.generation, at(0));
    expect(g.isKnownBad('bad', at(119_999))).toBe(true);
    expect(g.isKnownBad('bad', at(120_000))).toBe(false);
    g.recordBad('bad', g.generation, at(0));
    g.keyChanged('bad');
    expect(g.isKnownBad('bad', at(0))).toBe(false);
    g.recordBad('bad', g.generation, at(0));
    g.ownerChanged('u', false);
    expect(g.isKnownBad('bad', at(0))).toBe(true);
    g.ownerChanged('u', true);
    expect(g.isKnownBad('bad', at(0))).toBe(false);
  });
});

describe('KeyGuard: look-ups of unseen keys', () => {
  const admitted = (a: Admission) => {
    if (a.bad) throw new Error('refused');
    return a;
  };

  it('lets at most lookupConcurrency unseen keys look up at once, first come first served; known good keys skip the queue', async () => {
    const g = liveGuard({ lookupConcurrency: 2 });
    g.recordGood('good', at(0));
    const order: string[] = [];
    const tickets = ['k1', 'k2', 'k3', 'k4'].map((k) => g.admit(k, at(0)).then((a) => (order.push(k), admitted(a))));
    const good = admitted(await g.admit('good', at(0)));
    good.release();
    // Every admission that can start has started once the microtasks are done.
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['k1', 'k2']);
    expect(g.lookups()).toMatchObject({ peakInFlight: 2, waiting: 2 });
    (await tickets[0]!).release();
    (await tickets[2]!).release();
    (await tickets[1]!).release();
    (await tickets[3]!).release();
    expect(order).toEqual(['k1', 'k2', 'k3', 'k4']);
    expect(g.lookups()).toEqual({ passed: 4, peakInFlight: 2, waiting: 0 });
  });

  it('looks one hash up once at a time: the others wait for its outcome', async () => {
    const g = liveGuard({ lookupConcurrency: 4 });
    const first = admitted(await g.admit('h', at(0)));
    const second = g.admit('h', at(0));
    const third = g.admit('h', at(0));
    g.recordBad('h', first.generation, at(0));
    first.release();
    expect(await second).toEqual({ bad: true });
    expect(await third).toEqual({ bad: true });
    const good = admitted(await g.admit('g', at(0)));
    const again = g.admit('g', at(0));
    g.recordGood('g', at(0));
    good.release();
    admitted(await again).release();
    // Two look-ups in all: one per hash.
    expect(g.lookups().passed).toBe(2);
  });

  it('lets the next caller look the hash up when the first look-up decided nothing (it failed, or the channel is down)', async () => {
    const g = new KeyGuard({ lookupConcurrency: 1 });
    const first = admitted(await g.admit('h', at(0)));
    const second = g.admit('h', at(0));
    g.recordBad('h', first.generation, at(0));
    first.release();
    admitted(await second).release();
    expect(g.lookups().passed).toBe(2);
  });
});

describe('KeyGuard: bounded memory', () => {
  it('keeps at most maxEntries per table under a flood of distinct keys and spent windows', () => {
    const g = liveGuard({ maxEntries: 100 });
    for (let i = 0; i < 5_000; i++) {
      g.recordBad(`k${i}`, g.generation, at(0));
      g.recordGood(`g${i}`, at(0));
      g.markSpent(sighting(g, `s${i}`), spentMinute);
    }
    expect(g.sizes()).toEqual({ spentKeys: 100, badKeys: 100, goodKeys: 100 });
    // The newest entries are the ones kept.
    expect(g.spent('public:s4999', at(0))).toBeDefined();
    expect(g.spent('public:s0', at(0))).toBeUndefined();
    expect(g.isKnownBad('k4999', at(0))).toBe(true);
    expect(g.isKnownBad('k0', at(0))).toBe(false);
  });
});
