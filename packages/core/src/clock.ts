/**
 * Time is a dependency. Everything that depends on the clock (rate windows, expiry, purges, schedules) reads `now()`
 * from the Deps' clock and passes it to SQL as a parameter instead of calling PostgreSQL's `now()`, so a test can move
 * time without waiting for it. Waits and timers that decide behaviour (the sign-in slow-down, retries, heartbeats,
 * lingering) run on the same clock, as pg-boss's do on its own: a test moves the clock past them instead of waiting.
 */
export interface Clock {
  now(): Date;
  /** Resolves once `ms` have passed on this clock: a wait tests cut short by moving the clock, never by waiting. */
  sleep(ms: number): Promise<void>;
  /**
   * Calls `fn` once `ms` have passed on this clock, unless cleared first. Never keeps the process alive: whoever
   * starts a timer clears it when it stops.
   */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  /** Cancels a timer that has not fired; does nothing for one that has, or for none. */
  clearTimeout(timer: ClockTimer | null | undefined): void;
}

declare const timerBrand: unique symbol;
/** A timer of one clock, to hand back to that clock's `clearTimeout`. */
export interface ClockTimer {
  readonly [timerBrand]: true;
}

/**
 * Node fires a timer of more than 2^31 - 1 ms (24.8 days) after 1 ms instead: a due time that far away (a retry
 * scheduled by a clock set far ahead) would become a busy loop. Such a timer fires at the bound; its owner looks again.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, MAX_TIMER_MS))),
  setTimeout: (fn, ms) => setTimeout(fn, Math.min(ms, MAX_TIMER_MS)).unref() as unknown as ClockTimer,
  clearTimeout: (timer) => clearTimeout(timer as unknown as NodeJS.Timeout | undefined),
};

interface Pending {
  due: number;
  fire: () => void;
  /** A `sleep` (counted by `sleeping`) rather than a timer. */
  sleep: boolean;
  /** The wall-clock timer that fires it when the clock gets there by itself. */
  wall?: NodeJS.Timeout;
}

/**
 * A clock tests move by hand. It runs with the wall clock (so time-outs and ordering behave) plus an offset that
 * `advance` grows; `freeze` stops it at one instant until `unfreeze`. Sleeps and timers fire when the clock reaches
 * their due time: moved there by hand (at once, in due order, before `advance` returns), or, while it runs, by the
 * wall clock. While frozen, only moving it fires them.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  private frozenAt: number | null = null;
  private readonly pending = new Set<Pending>();

  now(): Date {
    return new Date(this.frozenAt ?? Date.now() + this.offsetMs);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.add(ms, resolve, true));
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    return this.add(ms, fn, false) as unknown as ClockTimer;
  }

  clearTimeout(timer: ClockTimer | null | undefined): void {
    const p = timer as unknown as Pending | null | undefined;
    if (!p || !this.pending.delete(p)) return;
    clearTimeout(p.wall);
  }

  /** Sleeps not yet over: a test waits for one to start before moving the clock past it. */
  get sleeping(): number {
    let n = 0;
    for (const p of this.pending) if (p.sleep) n++;
    return n;
  }

  /** Timers not yet fired (sleeps not counted). */
  get timers(): number {
    return this.pending.size - this.sleeping;
  }

  private add(ms: number, fire: () => void, sleep: boolean): Pending {
    const p: Pending = { due: this.now().getTime() + Math.max(0, ms), fire, sleep };
    this.pending.add(p);
    this.arm(p);
    return p;
  }

  /**
   * Gives a pending call a wall-clock timer to its due time: at once if it is due (never synchronously, as a timer
   * never fires inside the call that set it), to the due time while the clock runs, none while it stands still.
   */
  private arm(p: Pending): void {
    clearTimeout(p.wall);
    p.wall = undefined;
    const wait = p.due - this.now().getTime();
    if (wait > 0 && this.frozenAt !== null) return;
    // Bounded like systemClock's: past 2^31 - 1 ms Node fires after 1 ms, and settle() re-arming it would spin.
    p.wall = setTimeout(() => this.settle(), Math.min(Math.max(0, wait), MAX_TIMER_MS));
    if (!p.sleep) p.wall.unref();
  }

  /** Fires what is due, in due order (then in the order set), and re-arms the rest for the clock as it now stands. */
  private settle(): void {
    const now = this.now().getTime();
    const due = [...this.pending].filter((p) => p.due <= now).sort((a, b) => a.due - b.due);
    for (const p of due) {
      this.pending.delete(p);
      clearTimeout(p.wall);
    }
    for (const p of due) {
      try {
        p.fire();
      } catch (err) {
        // As from a real timer: the error surfaces on its own, and the other calls still fire.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    for (const p of this.pending) this.arm(p);
  }

  /** Moves time forward (or back, with a negative value). */
  advance(ms: number): void {
    if (this.frozenAt !== null) this.frozenAt += ms;
    else this.offsetMs += ms;
    this.settle();
  }

  /** Jumps to `at` and keeps running from there. */
  set(at: Date): void {
    if (this.frozenAt !== null) this.frozenAt = at.getTime();
    else this.offsetMs = at.getTime() - Date.now();
    this.settle();
  }

  freeze(at: Date = this.now()): void {
    this.frozenAt = at.getTime();
    this.settle();
  }

  unfreeze(): void {
    if (this.frozenAt !== null) this.offsetMs = this.frozenAt - Date.now();
    this.frozenAt = null;
    this.settle();
  }
}
