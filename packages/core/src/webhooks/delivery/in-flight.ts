/**
 * The attempts a worker process is sending. A `webhook.deliver` job ends as soon as its attempt is taken (from then
 * on the worker lock and the attempt's lease keep it, not pg-boss), so nothing else bounds how many run at once: this
 * does, by holding new jobs back while the process is full. Shutdown waits on it before giving the worker key up.
 */
export class InFlight {
  private readonly max: number;
  private readonly running = new Set<Promise<void>>();
  private waiters: (() => void)[] = [];

  constructor(max: number) {
    this.max = max;
  }

  get size(): number {
    return this.running.size;
  }

  /** Resolves once fewer than `max` attempts are running. */
  async room(): Promise<void> {
    while (this.running.size >= this.max) await new Promise<void>((wake) => this.waiters.push(wake));
  }

  /** Tracks `work` (which must not reject) until it settles. */
  add(work: Promise<void>): void {
    this.running.add(work);
    void work.finally(() => {
      this.running.delete(work);
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    });
  }

  /** Resolves when every attempt running now has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
