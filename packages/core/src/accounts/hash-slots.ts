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
 * Seconds a refused caller is told to wait: a queue of 16 behind 2 slots drains in about a second at cost 17, so a
 * retry two seconds later usually finds room without inviting a stampede.
 */
export const HASH_BUSY_RETRY_AFTER_S = 2;

const busy = () => errors.serviceUnavailable('Too many password checks are in progress; retry shortly', HASH_BUSY_RETRY_AFTER_S);

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

/**
 * A counting semaphore with a bounded FIFO queue for password hashing. scrypt runs on libuv's threadpool (4 threads by
 * default, 128 MB each at cost 17), which Node shares with WebCrypto, dns.lookup and fs: pg's SCRAM handshake for a
 * new database connection is a chain of WebCrypto calls there. Unbounded, a flood of sign-ups queued its hashes ahead
 * of those calls, so any request that needed a new pool connection waited seconds (see docs/benchmarks.md, "Measured"). With
 * fewer slots than threads, the other threads stay free; the queue and its wait bound memory and latency, and past
 * them the caller hears 503 with `retry-after` (the server's capacity, not the caller's rate, is what ran out).
 *
 * Callers take a slot holding no database connection: a hash never sits inside a transaction.
 */
export class HashSlots {
  readonly limits: HashSlotLimits;
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(limits: HashSlotLimits) {
    this.limits = limits;
  }

  /** Hashes running and callers waiting, for tests and diagnostics. */
  get usage(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Runs `fn` in a slot, waiting for one if need be; refuses with 503 when the queue is full or the wait too long. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Takes a slot; the caller must `release` it. */
  acquire(): Promise<void> {
    if (this.running < this.limits.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.queue) return Promise.reject(busy());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        // The slot passes straight from the releaser to the waiter: `running` does not change.
        grant: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(busy());
        }, this.limits.maxWaitMs),
      };
      this.waiting.push(waiter);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.running--;
  }
}
