/**
 * Time is a dependency. Everything that depends on the clock (rate windows, expiry, purges, schedules) reads `now()`
 * from the Deps' clock and passes it to SQL as a parameter instead of calling PostgreSQL's `now()`, so a test can move
 * time without waiting for it.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * A clock tests move by hand. It runs with the wall clock (so time-outs and ordering behave) plus an offset that
 * `advance` grows; `freeze` stops it at one instant until `unfreeze`.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  private frozenAt: number | null = null;

  now(): Date {
    return new Date(this.frozenAt ?? Date.now() + this.offsetMs);
  }

  /** Moves time forward (or back, with a negative value). */
  advance(ms: number): void {
    if (this.frozenAt !== null) this.frozenAt += ms;
    else this.offsetMs += ms;
  }

  /** Jumps to `at` and keeps running from there. */
  set(at: Date): void {
    if (this.frozenAt !== null) this.frozenAt = at.getTime();
    else this.offsetMs = at.getTime() - Date.now();
  }

  freeze(at: Date = this.now()): void {
    this.frozenAt = at.getTime();
  }

  unfreeze(): void {
    if (this.frozenAt !== null) this.offsetMs = this.frozenAt - Date.now();
    this.frozenAt = null;
  }
}
