/** Human output on stderr: messages, a progress bar, and API keys shown only masked. */
import type { CliContext } from './context.ts';

/** `ck_live_…a1b2`: the prefix (key type) and the last four characters, never the secret part. */
export function maskKey(key: string): string {
  const prefix = /^[A-Za-z]+_(?:[A-Za-z]+_)?/.exec(key)?.[0] ?? '';
  const rest = key.slice(prefix.length);
  // Too short to show any of it safely: four characters of a short secret are too large a share of it.
  if (rest.length < 16) return `${prefix}…`;
  return `${prefix}…${rest.slice(-4)}`;
}

/** Whether stderr may carry ANSI colours: a terminal, and NO_COLOR unset (https://no-color.org). */
export function colours(ctx: Pick<CliContext, 'isTTY' | 'env'>): boolean {
  return ctx.isTTY && !ctx.env.NO_COLOR;
}

/** Messages on stderr, prefixed, coloured only on a terminal. */
export function messages(ctx: Pick<CliContext, 'stderr' | 'isTTY' | 'env'>) {
  const paint = (code: string, text: string) => (colours(ctx) ? `\u001b[${code}m${text}\u001b[0m` : text);
  return {
    info: (text: string) => void ctx.stderr.write(`${text}\n`),
    warn: (text: string) => void ctx.stderr.write(`${paint('33', 'warning:')} ${text}\n`),
    error: (text: string) => void ctx.stderr.write(`${paint('31', 'error:')} ${text}\n`),
  };
}

export interface ProgressState {
  done: number;
  failed: number;
}

export interface Progress {
  update(state: ProgressState): void;
  /** Draws the final state and ends the line. */
  finish(state: ProgressState): void;
}

const BAR_WIDTH = 24;
// A terminal redraw costs little, but hundreds a second flicker and slow a pipe-fed terminal: ten a second is smooth.
const REDRAW_MS = 100;
// In a log file one line per tenth of the work is readable; with no total known, one line per this many rows.
const PLAIN_EVERY_ROWS = 10_000;

/**
 * A progress display for `total` rows (an estimate; 0 when unknown). On a terminal one line redrawn in place; otherwise
 * a plain line at each tenth of the total, so a CI log stays short.
 */
export function progressBar(
  ctx: Pick<CliContext, 'stderr' | 'isTTY'>,
  opts: { label: string; total: number; now?: () => number },
): Progress {
  const now = opts.now ?? (() => performance.now());
  const started = now();
  let lastDraw = -Infinity;
  let lastStep = 0;
  let lastPrinted = -1;
  const fmt = (n: number) => n.toLocaleString('en-US');
  const line = (s: ProgressState, final: boolean) => {
    const seconds = Math.max((now() - started) / 1000, 0.001);
    const rate = `${fmt(Math.round(s.done / seconds))} rows/s`;
    const total = final ? s.done : Math.max(opts.total, s.done);
    const failed = `${fmt(s.failed)} failed`;
    if (!ctx.isTTY) return `${opts.label}: ${fmt(s.done)}/${fmt(total)} rows, ${rate}, ${failed}`;
    const ratio = total > 0 ? Math.min(s.done / total, 1) : 0;
    const filled = Math.round(ratio * BAR_WIDTH);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%`;
    return `${opts.label} ${bar} ${fmt(s.done)}/${fmt(total)} rows  ${rate}  ${failed}`;
  };
  return {
    update(s) {
      if (ctx.isTTY) {
        const t = now();
        if (t - lastDraw < REDRAW_MS) return;
        lastDraw = t;
        ctx.stderr.write(`\r\u001b[2K${line(s, false)}`);
        return;
      }
      const step = opts.total > 0 ? Math.floor((s.done / opts.total) * 10) : Math.floor(s.done / PLAIN_EVERY_ROWS);
      if (step <= lastStep) return;
      lastStep = step;
      lastPrinted = s.done;
      ctx.stderr.write(`${line(s, false)}\n`);
    },
    finish(s) {
      if (ctx.isTTY) ctx.stderr.write(`\r\u001b[2K${line(s, true)}\n`);
      // Off a terminal the last tenth already printed this state: a log needs it once.
      else if (lastPrinted !== s.done) ctx.stderr.write(`${line(s, true)}\n`);
    },
  };
}
