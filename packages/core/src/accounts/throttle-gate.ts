import pLimit, { type LimitFunction } from 'p-limit';

/**
 * The sign-in throttle's transaction waits on advisory locks of the address and the email, holding a pool connection
 * while it waits. Unchecked, 32 wrong passwords in flight from one address parked 19 of the pool's 20 connections on
 * that address's lock (measured by `npm run bench:edge`), and every other tenant's requests waited for a connection.
 * So in each process the checks of one address run one after another in memory, before a connection is taken, and at
 * most this many addresses are checked at once: a flood holds that many connections at most, whatever its spread.
 */
export const THROTTLE_CHECKS_AT_ONCE = 4;

export class ThrottleGate {
  private readonly gate: LimitFunction;
  private readonly tails = new Map<string, Promise<void>>();

  constructor(concurrency = THROTTLE_CHECKS_AT_ONCE) {
    this.gate = pLimit(concurrency);
  }

  /** Runs `fn` after every earlier call for `address` in this process has finished, and inside the global gate. */
  async run<T>(address: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(address) ?? Promise.resolve();
    let finish!: () => void;
    const tail = before.then(() => new Promise<void>((resolve) => (finish = resolve)));
    this.tails.set(address, tail);
    try {
      await before;
      return await this.gate(fn);
    } finally {
      finish();
      // The last in line clears the entry, so the map holds only addresses with a check in flight.
      if (this.tails.get(address) === tail) this.tails.delete(address);
    }
  }

  /** Addresses with checks in flight or waiting (tests: the map must not outlive the traffic). */
  get addresses(): number {
    return this.tails.size;
  }
}
