import { describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, systemClock, TestClock } from './clock.ts';

describe('TestClock', () => {
  it('runs with the wall clock until moved', () => {
    const clock = new TestClock();
    expect(Math.abs(clock.now().getTime() - Date.now())).toBeLessThan(50);
    clock.advance(60_000);
    expect(clock.now().getTime() - Date.now()).toBeGreaterThan(59_900);
  });

  it('freezes at an instant, moves while frozen and resumes from where it stood', () => {
    const clock = new TestClock();
    const at = new Date('2030-01-01T04:59:59.000Z');
    clock.freeze(at);
    expect(clock.now().toISOString()).toBe(at.toISOString());
    clock.advance(1_000);
    expect(clock.now().toISOString()).toBe('2030-01-01T05:00:00.000Z');
    clock.unfreeze();
    expect(clock.now().getTime() - at.getTime()).toBeGreaterThanOrEqual(1_000);
    expect(clock.now().getTime() - at.getTime()).toBeLessThan(1_100);
  });

  it('set jumps to an instant and keeps running', () => {
    const clock = new TestClock();
    clock.set(new Date('2031-06-01T00:00:00.000Z'));
    expect(Math.abs(clock.now().getTime() - Date.parse('2031-06-01T00:00:00.000Z'))).toBeLessThan(50);
  });

  it('sleeps until the clock is moved past the due time, not before', async () => {
    const clock = new TestClock();
    clock.freeze();
    const woke: number[] = [];
    const first = clock.sleep(1_000).then(() => woke.push(1));
    const second = clock.sleep(3_000).then(() => woke.push(2));
    expect(clock.sleeping).toBe(2);
    clock.advance(999);
    expect(clock.sleeping).toBe(2);
    clock.advance(1);
    await first;
    expect(woke).toEqual([1]);
    clock.set(new Date(clock.now().getTime() + 5_000));
    await second;
    expect(woke).toEqual([1, 2]);
    expect(clock.sleeping).toBe(0);
    // A sleep of nothing is over at once.
    await clock.sleep(0);
  });

  it('fires timers when moved past them, in due order, and never those cleared', () => {
    const clock = new TestClock();
    clock.freeze();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('late'), 60_000);
    clock.setTimeout(() => fired.push('early'), 1_000);
    const cleared = clock.setTimeout(() => fired.push('cleared'), 500);
    clock.clearTimeout(cleared);
    expect(clock.timers).toBe(2);
    expect(clock.sleeping).toBe(0);
    clock.advance(999);
    expect(fired).toEqual([]);
    // Fired before advance returns: a test moves the clock and the work is under way.
    clock.advance(60_000);
    expect(fired).toEqual(['early', 'late']);
    expect(clock.timers).toBe(0);
    clock.clearTimeout(cleared);
    clock.clearTimeout(undefined);
  });

  it('fires a timer that a timer sets when the clock reaches it, not in the same move', async () => {
    const clock = new TestClock();
    clock.freeze();
    const fired: number[] = [];
    const beat = () => {
      fired.push(clock.now().getTime());
      clock.setTimeout(beat, 1_000);
    };
    clock.setTimeout(beat, 1_000);
    const start = clock.now().getTime();
    clock.advance(10_000);
    expect(fired).toEqual([start + 10_000]);
    clock.advance(1_000);
    expect(fired).toEqual([start + 10_000, start + 11_000]);
    // A timer of 0 ms is due at once, yet fires after the call that set it, like a real one.
    let zero = false;
    clock.setTimeout(() => (zero = true), 0);
    expect(zero).toBe(false);
    await vi.waitFor(() => expect(zero).toBe(true));
  });

  it('bounds the wall timer of a far due time at 2^31 - 1 ms, so a running clock does not re-arm it every millisecond', () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const clock = new TestClock();
      const timer = clock.setTimeout(() => {}, 181 * 24 * 3600 * 1000);
      expect(spy).toHaveBeenLastCalledWith(expect.any(Function), MAX_TIMER_MS);
      clock.clearTimeout(timer);
    } finally {
      spy.mockRestore();
    }
  });

  it('while running, fires timers by the wall clock too', async () => {
    const clock = new TestClock();
    const start = clock.now().getTime();
    const fired = new Promise<number>((resolve) => clock.setTimeout(() => resolve(clock.now().getTime()), 20));
    expect(await fired).toBeGreaterThanOrEqual(start + 20);
  });
});

describe('systemClock', () => {
  it("bounds a timer's delay at 2^31 - 1 ms, past which Node would fire it after 1 ms", () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const timer = systemClock.setTimeout(() => {}, 40 * 24 * 3600 * 1000);
      expect(spy).toHaveBeenLastCalledWith(expect.any(Function), MAX_TIMER_MS);
      systemClock.clearTimeout(timer);
      systemClock.clearTimeout(systemClock.setTimeout(() => {}, 5_000));
      expect(spy).toHaveBeenLastCalledWith(expect.any(Function), 5_000);
    } finally {
      spy.mockRestore();
    }
  });
});
