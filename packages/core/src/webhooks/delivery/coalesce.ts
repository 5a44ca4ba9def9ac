import { withRequestId } from '../../http/request-scope.ts';

/**
 * Group commit for per-attempt statements. Every attempt of a pg-boss batch runs on its own, but taking it and
 * recording it are one-row statements whose cost is mostly the round trip (a socket write and a backend wake-up on
 * each side), not the row. Items pushed while a round is under way wait for the next round, which runs them all in one
 * statement; a lone item goes at the next turn of the event loop, so an idle engine adds no delay.
 */
export class Coalescer<I, O> {
  private readonly run: (items: I[]) => Promise<O[]>;
  private readonly max: number;
  private queue: { item: I; resolve: (out: O) => void; reject: (err: unknown) => void }[] = [];
  private busy = false;

  /** `run` answers one output per item, in order; `max` caps a round (the statement's parameter size). */
  constructor(run: (items: I[]) => Promise<O[]>, max: number) {
    this.run = run;
    this.max = max;
  }

  push(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.busy) return;
      this.busy = true;
      // setImmediate, not a microtask: the other jobs of a fetched batch get to push theirs into the same round. A round
      // serves many attempts, so it runs as part of no request (what it writes or logs is nobody's in particular).
      setImmediate(() => void withRequestId(undefined, () => this.drain()));
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const round = this.queue.splice(0, this.max);
      try {
        const out = await this.run(round.map((r) => r.item));
        round.forEach((r, i) => r.resolve(out[i] as O));
      } catch (err) {
        for (const r of round) r.reject(err);
      }
    }
    this.busy = false;
  }
}
