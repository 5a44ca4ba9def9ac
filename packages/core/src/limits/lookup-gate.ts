/**
 * A counting semaphore with a first-come queue: at most `concurrency` holders at once, the others wait their turn.
 * Nobody is ever turned away, so a real key that has to wait behind a flood is slowed, never refused.
 */
export class LookupGate {
  private active = 0;
  private peak = 0;
  private passed = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly concurrency: number;

  constructor(concurrency: number) {
    this.concurrency = Math.max(1, concurrency);
  }

  /** Resolves once the caller holds a place; it must call `leave()` exactly once afterwards. */
  async enter(): Promise<void> {
    this.passed++;
    if (this.active < this.concurrency) {
      this.active++;
    } else {
      // The place is handed over by `leave`, so `active` never drops below the cap while anyone waits.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.peak = Math.max(this.peak, this.active);
  }

  leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  /** Look-ups let through so far, the most ever in flight at once, and how many wait now (tests and the bench). */
  stats(): { passed: number; peakInFlight: number; waiting: number } {
    return { passed: this.passed, peakInFlight: this.peak, waiting: this.waiting.length };
  }
}
