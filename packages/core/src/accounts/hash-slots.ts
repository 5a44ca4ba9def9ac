import pLimit, { type LimitFunction } from 'p-limit';
import { errors } from '../errors.ts';

export interface HashSlotLimits {
  /** Hashes computed at once. */
  concurrency: number;
  /** Callers allowed to wait for a slot; one more is refused at once. */
  queue: number;
  /** A waiting caller is refused after this long. */
  maxWaitMs: number;
}

/**
 * Seconds a refused caller is told to wait: a queue of 16 behind one or two slots drains in one to two seconds at cost
 * 17, so a retry two seconds later usually finds room without inviting a stampede.
 */
export const HASH_BUSY_RETRY_AFTER_S = 2;

/** What a caller that gave up waiting runs when its turn comes. */
const skipped: unique symbol = Symbol('skipped');

const busy = () => errors.serviceUnavailable('Too many password checks are in progress; retry shortly', HASH_BUSY_RETRY_AFTER_S);

/**
 * p-limit's first-come queue for password hashing, bounded: what p-limit lacks is a queue that refuses when full and
 * a wait that gives up, so those two are added here and nothing else. Each slot is one of the niced hashing threads
 * (hash-workers.ts). Before those, scrypt ran on libuv's threadpool, which Node shares with WebCrypto, dns.lookup and
 * fs (pg's SCRAM handshake for a new database connection is a chain of WebCrypto calls there): a flood of sign-ups
 * queued its hashes ahead of those calls, so any request that needed a new pool connection waited seconds (see
 * docs/benchmarks.md, "Measured"). The queue and its wait bound memory and latency, and past them the caller hears
 * 503 with `retry-after` (the server's capacity, not the caller's rate, is what ran out).
 *
 * Callers take a slot holding no database connection: a hash never sits inside a transaction.
 */
export class HashSlots {
  readonly limits: HashSlotLimits;
  private readonly slots: LimitFunction;
  /**
   * Callers that gave up waiting but are still in p-limit's queue (it cannot take one out): each runs nothing when its
   * turn comes, and none counts as waiting, so its place in our bound is free at once.
   */
  private abandoned = 0;

  constructor(limits: HashSlotLimits) {
    this.limits = limits;
    this.slots = pLimit(limits.concurrency);
  }

  /** Hashes running and callers waiting, for tests and diagnostics. */
  get usage(): { running: number; waiting: number } {
    return { running: this.slots.activeCount, waiting: this.slots.pendingCount - this.abandoned };
  }

  /**
   * Refuses with 503 at once when a hash asked for now would be refused anyway (every slot taken, the queue full), so a
   * caller can skip the work it does before hashing (the sign-in throttle's transaction and its attempt row).
   */
  refuseIfFull(): void {
    if (this.slots.activeCount >= this.limits.concurrency && this.usage.waiting >= this.limits.queue) throw busy();
  }

  /** Runs `fn` in a slot, waiting for one if need be; refuses with 503 when the queue is full or the wait too long. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.slots.activeCount < this.limits.concurrency) return this.slots(fn);
    if (this.usage.waiting >= this.limits.queue) return Promise.reject(busy());
    return new Promise<T>((resolve, reject) => {
      let gaveUp = false;
      const timer = setTimeout(() => {
        gaveUp = true;
        this.abandoned++;
        reject(busy());
      }, this.limits.maxWaitMs);
      // Settled through p-limit's own promise, as the immediate path is: the slot is free again when the caller resumes.
      void this.slots(async () => {
        if (gaveUp) {
          this.abandoned--;
          return skipped;
        }
        clearTimeout(timer);
        return fn();
      }).then((result) => {
        if (result !== skipped) resolve(result);
      }, reject);
    });
  }

  /** Takes a slot until the returned function is called (tests hold the slots to see who waits). */
  acquire(): Promise<() => void> {
    return new Promise((held, refused) => {
      this.run(() => new Promise<void>((release) => held(release))).catch(refused);
    });
  }
}
