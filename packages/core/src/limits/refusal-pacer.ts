import { LRUCache } from 'lru-cache';

/** Addresses remembered at once; a flood of new addresses cannot grow memory past this (the oldest goes first). */
const MAX_ADDRESSES = 10_000;

/**
 * Paces the refusals one client address gets (nginx's `limit_req` with a delay, for refusals only). A closed-loop flood
 * re-sends the moment it is answered, so refusals answered at once, however cheap, take all the CPU that is free and
 * every other tenant queues behind them in the event loop. Held for a second, each of the flood's connections sends
 * one request a second instead of hundreds; a held refusal costs a timer and a socket (bounded by the per-address
 * connection cap), no CPU and no database connection. Only refusals are held: a valid key behind the same address as a
 * flood keeps its speed.
 */
export class RefusalPacer {
  private readonly seen = new LRUCache<string, { second: number; count: number }>({ max: MAX_ADDRESSES });
  private readonly freePerSecond: number;
  private readonly delayMs: number;

  constructor(opts: { freePerSecond: number; delayMs: number }) {
    this.freePerSecond = opts.freePerSecond;
    this.delayMs = opts.delayMs;
  }

  /** Counts a refusal to `address` at `nowMs`; how long to hold it (0: answer at once). */
  delayFor(address: string, nowMs: number): number {
    if (this.delayMs === 0) return 0;
    const second = Math.floor(nowMs / 1000);
    const entry = this.seen.peek(address);
    const count = entry && entry.second === second ? entry.count + 1 : 1;
    this.seen.set(address, { second, count });
    return count > this.freePerSecond ? this.delayMs : 0;
  }

  /** Addresses remembered (tests check the bound). */
  get size(): number {
    return this.seen.size;
  }
}
