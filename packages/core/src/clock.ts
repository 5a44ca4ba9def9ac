/**
 * Time is a dependency. Everything that depends on the clock (rate windows, expiry, purges, schedules) reads `now()`
 * from the Deps' clock and passes it to SQL as a parameter instead of calling PostgreSQL's `now()`, so a test can move
 * time without waiting for it.
 */
export interface Clock {
  now(): Date;
  /** Resolves once `ms` have passed on this clock: a wait tests cut short by moving the clock, never by waiting. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = { now: () => new Date(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

interface Sleeper {
  due: number;
  wake: () => void;
  timer?: NodeJS.Timeout;
}

/**
 * A clock tests move by hand. It runs with the wall clock (so time-outs and ordering behave) plus an offset that
 * `advance` grows; `freeze` stops it at one instant until `unfreeze`.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  private frozenAt: number | null = null;
  private sleepers: Sleeper[] = [];

  now(): Date {
    return new Date(this.frozenAt ?? Date.now() + this.offsetMs);
  }

  /** Wakes when the clock reaches `now + ms`: moved there by hand, or, while it runs, by the wall clock. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.sleepers.push({ due: this.now().getTime() + ms, wake: resolve });
      this.wakeDue();
    });
  }

  /** Sleeps not yet over: a test waits for one to start before moving the clock past it. */
  get sleeping(): number {
    return this.sleepers.length;
  }

  /** Wakes the sleepers that are due; while the clock runs, the others get a wall-clock timer to their due time. */
  private wakeDue(): void {
    const now = this.now().getTime();
    for (const s of this.sleepers) {
      clearTimeout(s.timer);
      s.timer = undefined;
      if (s.due <= now) s.wake();
      else if (this.frozenAt === null) s.timer = setTimeout(() => this.wakeDue(), s.due - now);
    }
    this.sleepers = this.sleepers.filter((s) => s.due > now);
  }

  /** Moves time forward (or back, with a negative value). */
  advance(ms: number): void {
    if (this.frozenAt !== null) this.frozenAt += ms;
    else this.offsetMs += ms;
    this.wakeDue();
  }

  /** Jumps to `at` and keeps running from there. */
  set(at: Date): void {
    if (this.frozenAt !== null) this.frozenAt = at.getTime();
    else this.offsetMs = at.getTime() - Date.now();
    this.wakeDue();
  }

  freeze(at: Date = this.now()): void {
    this.frozenAt = at.getTime();
    this.wakeDue();
  }

  unfreeze(): void {
    if (this.frozenAt !== null) this.offsetMs = this.frozenAt - Date.now();
    this.frozenAt = null;
    this.wakeDue();
  }
}
