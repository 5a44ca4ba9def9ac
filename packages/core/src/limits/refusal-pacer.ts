import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.ts';
import { refusalsHeld } from '../metrics/registry.ts';

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
  private readonly clock: Clock | undefined;

  constructor(opts: { freePerSecond: number; delayMs: number; clock?: Clock }) {
    this.freePerSecond = opts.freePerSecond;
    this.delayMs = opts.delayMs;
    this.clock = opts.clock;
  }

  /** Counts a refusal to `address` now and waits, on the app's clock, as long as it must be held. */
  async hold(address: string): Promise<void> {
    if (!this.clock) return;
    const ms = this.delayFor(address, this.clock.now().getTime());
    if (!ms) return;
    refusalsHeld.inc();
    await this.clock.sleep(ms);
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

/**
 * The statuses of a refusal: a credential not accepted, a budget, limit or throttle spent, a capacity full (the password
 * hashing queue, the database). A held 503 costs its client a second it would wait for `retry-after` anyway.
 */
export const PACED_STATUSES: ReadonlySet<number> = new Set([401, 429, 503]);

/**
 * Whom a refusal is counted against. A 503 says the server's capacity ran out (the hashing queue is full, the database
 * will not answer), whoever asked: it is paced for the whole process, so a flood that takes a new address for every
 * request (through a trusted proxy) cannot spin on the quick refusals of a full queue. The others are the client's own.
 */
export function pacingKey(status: number, address: string): string {
  return status === 503 ? 'capacity (any address)' : address;
}

const pacers = new WeakMap<object, RefusalPacer>();

/**
 * The app's one pacer (keyed by its Deps, like the key guard): every refusal goes through it wherever it was decided
 * (the /v1 answers from memory in apps/server's v1.ts; every procedure's, through trpc.ts's middleware: a key's first
 * look-up, the sign-in throttle, the sign-up and reset budgets), counted per address across surfaces, so a flood cannot
 * take its free refusals on each surface in turn.
 */
export function refusalPacerOf(deps: {
  config: { V1_REFUSALS_FREE_PER_SECOND: number; V1_REFUSAL_DELAY_MS: number };
  clock: Clock;
}): RefusalPacer {
  let pacer = pacers.get(deps);
  if (!pacer) {
    pacer = new RefusalPacer({
      freePerSecond: deps.config.V1_REFUSALS_FREE_PER_SECOND,
      delayMs: deps.config.V1_REFUSAL_DELAY_MS,
      clock: deps.clock,
    });
    pacers.set(deps, pacer);
  }
  return pacer;
}
