import type { Clock } from '@leadwire/core/clock.ts';
import type { FastifyInstance } from 'fastify';

/** Answers that refuse a request without doing its work: the answers floods are made of. */
const REFUSALS = new Set([401, 403, 429]);
/** Addresses remembered at once; a flood of new addresses cannot grow memory past this (the oldest goes first). */
const MAX_ADDRESSES = 10_000;

/**
 * Refusals to an address that keeps being refused are answered late (nginx's `limit_req` with a delay, for refusals
 * only). A closed-loop flood re-sends the moment it is answered, so refusals answered at once, however cheap, take all
 * the CPU that is free, and every other tenant queues behind them in the event loop. Held for `delayMs`, each of the
 * flood's connections sends one request a `delayMs` instead of thousands a second; a held answer costs a timer and a
 * socket (bounded by the per-address connection cap), no CPU. Successes are never delayed, so a valid key behind the
 * same address as a flood keeps its speed: only its own refusals would wait.
 */
export class Tarpit {
  private readonly seen = new Map<string, { second: number; count: number }>();
  private readonly freePerSecond: number;
  private readonly delayMs: number;

  constructor(opts: { freePerSecond: number; delayMs: number }) {
    this.freePerSecond = opts.freePerSecond;
    this.delayMs = opts.delayMs;
  }

  /** Counts a refusal to `address` at `nowMs`; how long to hold its answer (0: at once). */
  delayFor(address: string, nowMs: number): number {
    if (this.delayMs === 0) return 0;
    const second = Math.floor(nowMs / 1000);
    const entry = this.seen.get(address);
    const count = entry && entry.second === second ? entry.count + 1 : 1;
    this.seen.delete(address);
    this.seen.set(address, { second, count });
    if (this.seen.size > MAX_ADDRESSES) this.seen.delete(this.seen.keys().next().value!);
    return count > this.freePerSecond ? this.delayMs : 0;
  }

  /** Addresses remembered (tests check the bound). */
  get size(): number {
    return this.seen.size;
  }
}

/** Holds refusals past the free rate in `onSend`, after the handler released whatever it held (a database connection). */
export function registerTarpit(app: FastifyInstance, tarpit: Tarpit, clock: Clock): void {
  // A reply can pass through onSend twice (the REST surfaces replace an error's payload and send again): it is counted
  // once, and every pass waits for the same hold.
  const holds = new WeakMap<object, Promise<void>>();
  app.addHook('onSend', async (req, reply, payload) => {
    if (!REFUSALS.has(reply.statusCode)) return payload;
    let hold = holds.get(req);
    if (!hold) {
      const delay = tarpit.delayFor(req.ip, clock.now().getTime());
      hold = delay ? clock.sleep(delay) : Promise.resolve();
      holds.set(req, hold);
    }
    await hold;
    return payload;
  });
}
