import pLimit, { type LimitFunction } from 'p-limit';

/**
 * At most `concurrency` holders at once, first come first served (p-limit's queue). Nobody is ever turned away, so a
 * real key that has to wait behind a flood is slowed, never refused. A place is held from `enter` until its `leave`,
 * not for the length of one function: the holder's look-up runs in the caller, between other steps of its request.
 */
export class LookupGate {
  private readonly limit: LimitFunction;
  private peak = 0;
  private passed = 0;

  constructor(concurrency: number) {
    this.limit = pLimit(Math.max(1, concurrency));
  }

  /** Resolves once the caller holds a place, with the function that gives it back (a second call does nothing). */
  enter(): Promise<() => void> {
    this.passed++;
    return new Promise((entered) => {
      void this.limit(
        () =>
          new Promise<void>((leave) => {
            this.peak = Math.max(this.peak, this.limit.activeCount);
            entered(leave);
          }),
      );
    });
  }

  /** Look-ups let through so far, the most ever in flight at once, and how many wait now (tests and the bench). */
  stats(): { passed: number; peakInFlight: number; waiting: number } {
    return { passed: this.passed, peakInFlight: this.peak, waiting: this.limit.pendingCount };
  }
}
