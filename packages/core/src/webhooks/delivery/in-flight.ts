import pLimit, { type LimitFunction } from 'p-limit';

/**
 * The attempts a worker process is sending. A `webhook.deliver` job ends as soon as its attempt is taken (from then
 * on the worker lock and the attempt's lease keep it, not pg-boss), so nothing else bounds how many run at once: this
 * does (p-limit), by holding new jobs back while the process is full. Shutdown waits on it before giving the worker key up.
 */
export class InFlight {
  private readonly slots: LimitFunction;
  /** Every attempt started or waiting for a slot, until it settles: what `settled` waits for. */
  private readonly running = new Set<Promise<void>>();

  constructor(max: number) {
    this.slots = pLimit(max);
  }

  /** Attempts holding a slot (taking or sending). */
  get size(): number {
    return this.slots.activeCount;
  }

  /**
   * Waits for a slot, then `take`s the attempt in it. Resolves (or rejects) once the take is done, so the job can end;
   * what was taken (if anything) is then sent by `send` (which must not reject) in the same slot.
   */
  start<T>(take: () => Promise<T | null>, send: (taken: T) => Promise<void>): Promise<void> {
    let took!: (taking: Promise<T | null>) => void;
    const taken = new Promise<T | null>((resolve) => (took = resolve));
    const work = this.slots(async () => {
      const taking = take();
      took(taking);
      // A failed take is the job's to report (through `taken`); the slot is given back at once.
      const got = await taking.catch(() => null);
      if (got !== null) await send(got);
    });
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
    return taken.then(() => undefined);
  }

  /** Resolves when every attempt started or waiting now has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
