import { waiter } from '../../../test/support/waiter.ts';
import type { CliContext } from '../../src/cli/context.ts';
import { run } from '../../src/cli/main.ts';

/**
 * Runs `leadwire events tail` in-process. Its sleeps (polls, backoff) wait until `release()`, so the test decides
 * when time passes; `sleeping(n)` waits until the command has asked to sleep n times in all.
 */
export function startTail(argv: string[], over: Partial<CliContext> & Pick<CliContext, 'cwd' | 'configDir'>) {
  const abort = new AbortController();
  let out = '';
  let err = '';
  const w = waiter();
  const sleeps: number[] = [];
  let pending: (() => void)[] = [];
  const ctx: CliContext = {
    stdout: { write: (s: string) => ((out += s), w.wake()) },
    stderr: { write: (s: string) => ((err += s), w.wake()) },
    env: {},
    isTTY: false,
    fetch: globalThis.fetch,
    signal: abort.signal,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        sleeps.push(ms);
        pending.push(resolve);
        signal.addEventListener('abort', () => resolve(), { once: true });
        w.wake();
      }),
    ...over,
  };
  const release = () => {
    const p = pending;
    pending = [];
    for (const resolve of p) resolve();
  };
  let code: number | undefined;
  const done = run(['events', 'tail', ...argv], ctx).then((c) => {
    code = c;
    w.wake();
    return c;
  });
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const until = (ok: () => boolean, what: string) =>
    w
      .until(
        () => ok() || code !== undefined,
        () => `${what}\nstdout:\n${out}\nstderr:\n${err}`,
        15_000,
      )
      .then(() => {
        if (!ok()) throw new Error(`the command ended (exit ${code}) before: ${what}\n${err}`);
      });
  return {
    lines,
    stderr: () => err,
    sleeps,
    abort: () => abort.abort(),
    sleeping: (n: number) => until(() => sleeps.length >= n, `${n} sleeps`),
    lineCount: (n: number) => until(() => lines().length >= n, `${n} lines`),
    /** Waits for `n` lines, letting any wait the command starts before then (a retry, a poll) end at once. */
    linesReleasing: async (n: number) => {
      while (lines().length < n) {
        const asked = sleeps.length;
        await until(() => lines().length >= n || sleeps.length > asked, `${n} lines`);
        if (lines().length < n) release();
      }
    },
    release,
    stop: async () => {
      abort.abort();
      return done;
    },
    done,
  };
}
