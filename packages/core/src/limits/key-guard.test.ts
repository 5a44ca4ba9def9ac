import { describe, expect, it } from 'vitest';
import { TestClock } from '../clock.ts';
import { AppError } from '../errors.ts';
import { type Admission, KeyGuard, type KeySighting } from './key-guard.ts';
import { enforceRateLimits } from './rate-limit.ts';

const MINUTE = Date.UTC(2026, 0, 1, 12, 0, 0);
const at = (ms: number) => new Date(MINUTE + ms);
const noHeaders = () => {};
const spentMinute = { window: { count: 601, resetAt: at(60_000) }, limit: 600 };

/** The guard's clock, frozen where each step puts it: the tables' expiry reads it. */
let clock = new TestClock();
/** Runs `f` with the guard's clock at `ms` past the minute. */
const on = <T>(ms: number, f: () => T): T => {
  clock.freeze(at(ms));
  return f();
};

function newGuard(opts: ConstructorParameters<typeof KeyGuard>[0] = {}): KeyGuard {
  clock = new TestClock();
  clock.freeze(at(0));
  return new KeyGuard({ ...opts, clock });
}

function liveGuard(opts: ConstructorParameters<typeof KeyGuard>[0] = {}): KeyGuard {
  const g = newGuard(opts);
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
    expect(on(10_000, () => g.spent('public:h1'))?.limit).toBe(600);
    expect(on(59_999, () => g.spent('public:h1'))).toBeDefined();
    expect(on(10_000, () => g.spent('public:other'))).toBeUndefined();
    expect(on(60_000, () => g.spent('public:h1'))).toBeUndefined();
    expect(g.sizes().spentKeys).toBe(0);
  });

  it('forgets a spent window at its end even when the clock moved while it was being remembered', () => {
    // A running clock read twice in markSpent (once for the time left, once by the table as its entry's start) kept
    // the window a millisecond past its end whenever a millisecond passed in between: a request at the end was refused.
    const ticking = new (class extends TestClock {
      reading = MINUTE;
      override now() {
        return new Date(this.reading++);
      }
    })();
    const g = new KeyGuard({ clock: ticking });
    g.setLive(true);
    g.markSpent(sighting(g, 'h'), spentMinute);
    ticking.reading = MINUTE + 59_999;
    expect(g.spent('public:h')).toBeDefined();
    ticking.reading = MINUTE + 60_000;
    expect(g.spent('public:h')).toBeUndefined();
  });

  it('is filled by enforceRateLimits only when it refuses, with the window that reopens last', () => {
    const g = liveGuard();
    const remember = { guard: g, key: { ...sighting(g, 'h'), guardKey: 'internal:h' } };
    const minute = { window: { count: 61, resetAt: at(60_000) }, limit: 60 };
    const day = { window: { count: 10_001, resetAt: at(86_400_000) }, limit: 10_000 };
    enforceRateLimits([{ ...minute, window: { ...minute.window, count: 60 } }], noHeaders, at(0), remember);
    expect(on(0, () => g.spent('internal:h'))).toBeUndefined();
    expect(() => enforceRateLimits([minute, day], noHeaders, at(0), remember)).toThrow(AppError);
    expect(on(3_600_000, () => g.spent('internal:h'))?.limit).toBe(10_000);
  });

  it('stops refusing a key once it expires, even inside its spent window', () => {
    const g = liveGuard();
    g.markSpent(sighting(g, 'h', { expiresAt: at(30_000) }), spentMinute);
    expect(on(29_999, () => g.spent('public:h'))).toBeDefined();
    expect(on(30_000, () => g.spent('public:h'))).toBeUndefined();
  });

  it('forgets a key revoked, and every key of a user whose credentials changed, on both surfaces', () => {
    const g = liveGuard();
    g.markSpent(sighting(g, 'a'), spentMinute);
    g.markSpent({ ...sighting(g, 'a'), guardKey: 'internal:a' }, spentMinute);
    g.markSpent(sighting(g, 'b'), spentMinute);
    g.markSpent(sighting(g, 'c', { ownerId: 'owner-2' }), spentMinute);
    g.keyChanged('a');
    expect([on(0, () => g.spent('public:a')), on(0, () => g.spent('internal:a'))]).toEqual([undefined, undefined]);
    expect(on(0, () => g.spent('public:b'))).toBeDefined();
    g.ownerChanged('owner-1', false);
    expect(on(0, () => g.spent('public:b'))).toBeUndefined();
    expect(on(0, () => g.spent('public:c'))).toBeDefined();
  });

  it('does not remember what a look-up saw if a change to that key or its owner was heard while it ran', () => {
    const g = liveGuard();
    const seen = sighting(g, 'h');
    g.keyChanged('other');
    g.ownerChanged('owner-2', false);
    g.markSpent(seen, spentMinute);
    expect(on(0, () => g.spent('public:h'))).toBeDefined();
    for (const change of [() => g.keyChanged('h'), () => g.ownerChanged('owner-1', false), () => g.forgetRefusals()]) {
      const during = sighting(g, 'h');
      change();
      g.markSpent(during, spentMinute);
      expect(on(0, () => g.spent('public:h'))).toBeUndefined();
    }
    // A hash not found: voided by a change to it, or by a reactivation (which may revive any key), not by others.
    let stale = g.generation;
    g.ownerChanged('someone', false);
    on(0, () => g.recordBad('x', stale));
    expect(on(0, () => g.isKnownBad('x'))).toBe(true);
    for (const change of [() => g.keyChanged('y'), () => g.ownerChanged('someone', true)]) {
      stale = g.generation;
      change();
      on(0, () => g.recordBad('y', stale));
      expect(on(0, () => g.isKnownBad('y'))).toBe(false);
    }
  });

  it('does not remember a look-up older than the changes it keeps', () => {
    const g = liveGuard();
    const seen = sighting(g, 'h');
    for (let i = 0; i < 300; i++) g.keyChanged(`other${i}`);
    g.markSpent(seen, spentMinute);
    expect(on(0, () => g.spent('public:h'))).toBeUndefined();
  });
});

describe('KeyGuard: only while every change is heard', () => {
  it('answers nothing from memory before the channel is live, nor while it is down, and forgets on both edges', () => {
    const g = newGuard();
    g.markSpent(sighting(g, 'h'), spentMinute);
    on(0, () => g.recordBad('bad', g.generation));
    expect([on(0, () => g.spent('public:h')), on(0, () => g.isKnownBad('bad'))]).toEqual([undefined, false]);

    g.setLive(true);
    g.markSpent(sighting(g, 'h'), spentMinute);
    on(0, () => g.recordBad('bad', g.generation));
    expect([on(0, () => g.spent('public:h'))?.limit, on(0, () => g.isKnownBad('bad'))]).toEqual([600, true]);

    g.setLive(false);
    expect([on(0, () => g.spent('public:h')), on(0, () => g.isKnownBad('bad'))]).toEqual([undefined, false]);
    // Back up: what was remembered before the gap is gone (changes made during it were never heard).
    g.setLive(true);
    expect([on(0, () => g.spent('public:h')), on(0, () => g.isKnownBad('bad'))]).toEqual([undefined, false]);
    expect(g.sizes()).toMatchObject({ spentKeys: 0, badKeys: 0 });
  });
});

describe('KeyGuard: keys the database did not find', () => {
  it('remembers them for rememberMs, until the hash is created, or until a user is reactivated', () => {
    const g = liveGuard({ rememberMs: 120_000 });
    on(0, () => g.recordBad('bad', g.generation));
    expect(on(119_999, () => g.isKnownBad('bad'))).toBe(true);
    expect(on(120_000, () => g.isKnownBad('bad'))).toBe(false);
    on(0, () => g.recordBad('bad', g.generation));
    g.keyChanged('bad');
    expect(on(0, () => g.isKnownBad('bad'))).toBe(false);
    on(0, () => g.recordBad('bad', g.generation));
    g.ownerChanged('u', false);
    expect(on(0, () => g.isKnownBad('bad'))).toBe(true);
    g.ownerChanged('u', true);
    expect(on(0, () => g.isKnownBad('bad'))).toBe(false);
  });
});

describe('KeyGuard: keys that authenticated', () => {
  it('remember a good key for rememberMs after it was last refreshed, and refresh it at most once a minute', () => {
    const g = liveGuard({ rememberMs: 600_000 });
    on(0, () => g.recordGood('k'));
    on(59_999, () => g.recordGood('k'));
    expect(on(599_999, () => g.isKnownGood('k'))).toBe(true);
    expect(on(600_000, () => g.isKnownGood('k'))).toBe(false);
    const h = liveGuard({ rememberMs: 600_000 });
    on(0, () => h.recordGood('k'));
    on(60_000, () => h.recordGood('k'));
    expect(on(659_999, () => h.isKnownGood('k'))).toBe(true);
    expect(on(660_000, () => h.isKnownGood('k'))).toBe(false);
  });
});

describe('KeyGuard: look-ups of unseen keys', () => {
  const admitted = (a: Admission) => {
    if (a.bad) throw new Error('refused');
    return a;
  };

  it('lets at most lookupConcurrency unseen keys look up at once, first come first served; known good keys skip the queue', async () => {
    const g = liveGuard({ lookupConcurrency: 2 });
    on(0, () => g.recordGood('good'));
    const order: string[] = [];
    const tickets = ['k1', 'k2', 'k3', 'k4'].map((k) => on(0, () => g.admit(k)).then((a) => (order.push(k), admitted(a))));
    const good = admitted(await on(0, () => g.admit('good')));
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
    const first = admitted(await on(0, () => g.admit('h')));
    const second = on(0, () => g.admit('h'));
    const third = on(0, () => g.admit('h'));
    on(0, () => g.recordBad('h', first.generation));
    first.release();
    expect(await second).toEqual({ bad: true });
    expect(await third).toEqual({ bad: true });
    const good = admitted(await on(0, () => g.admit('g')));
    const again = on(0, () => g.admit('g'));
    on(0, () => g.recordGood('g'));
    good.release();
    admitted(await again).release();
    // Two look-ups in all: one per hash.
    expect(g.lookups().passed).toBe(2);
  });

  it('lets the next caller look the hash up when the first look-up decided nothing (it failed, or the channel is down)', async () => {
    const g = newGuard({ lookupConcurrency: 1 });
    const first = admitted(await on(0, () => g.admit('h')));
    const second = on(0, () => g.admit('h'));
    on(0, () => g.recordBad('h', first.generation));
    first.release();
    admitted(await second).release();
    expect(g.lookups().passed).toBe(2);
  });
});

describe('KeyGuard: bounded memory', () => {
  it('keeps at most maxEntries per table under a flood of distinct keys and spent windows', () => {
    const g = liveGuard({ maxEntries: 100 });
    for (let i = 0; i < 5_000; i++) {
      on(0, () => g.recordBad(`k${i}`, g.generation));
      on(0, () => g.recordGood(`g${i}`));
      g.markSpent(sighting(g, `s${i}`), spentMinute);
    }
    expect(g.sizes()).toEqual({ spentKeys: 100, badKeys: 100, goodKeys: 100 });
    // The newest entries are the ones kept.
    expect(on(0, () => g.spent('public:s4999'))).toBeDefined();
    expect(on(0, () => g.spent('public:s0'))).toBeUndefined();
    expect(on(0, () => g.isKnownBad('k4999'))).toBe(true);
    expect(on(0, () => g.isKnownBad('k0'))).toBe(false);
  });
});
