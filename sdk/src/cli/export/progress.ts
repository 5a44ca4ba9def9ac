/**
 * Progress of a stream of unknown length: a count and a rate. On a terminal one line redrawn in place at most ten
 * times a second; off a terminal (asked for with --progress) a plain line every `every` records, for a log.
 */
import type { CliContext } from '../context.ts';

const REDRAW_MS = 100;
const PLAIN_EVERY = 10_000;

export interface Counter {
  /** Counts `n` more records. */
  add(n: number): void;
  /** Draws the final count (and ends the line on a terminal). */
  finish(): void;
}

export function counter(
  ctx: Pick<CliContext, 'stderr' | 'isTTY'>,
  opts: { label: string; unit: string; now: () => number; every?: number },
): Counter {
  const started = opts.now();
  const every = opts.every ?? PLAIN_EVERY;
  let done = 0;
  let lastDraw = -Infinity;
  let lastPlain = 0;
  const fmt = (n: number) => n.toLocaleString('en-US');
  const line = () => {
    const seconds = Math.max((opts.now() - started) / 1000, 0.001);
    return `${opts.label}: ${fmt(done)} ${opts.unit}, ${fmt(Math.round(done / seconds))} ${opts.unit}/s`;
  };
  return {
    add(n) {
      done += n;
      if (ctx.isTTY) {
        const t = opts.now();
        if (t - lastDraw < REDRAW_MS) return;
        lastDraw = t;
        ctx.stderr.write(`\r\u001b[2K${line()}`);
      } else if (Math.floor(done / every) > Math.floor(lastPlain / every)) {
        lastPlain = done;
        ctx.stderr.write(`${line()}\n`);
      }
    },
    finish() {
      if (ctx.isTTY) ctx.stderr.write(`\r\u001b[2K${line()}\n`);
      else if (lastPlain !== done) ctx.stderr.write(`${line()}\n`);
    },
  };
}
