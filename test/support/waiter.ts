/**
 * Waiting for something a callback reports (output written, an event parsed) without polling: `until(ok)` is checked
 * again each time the producer calls `wake()`, and fails with `what()` after a deadline that only bounds a hang.
 */
export function waiter() {
  const wakers = new Set<() => void>();
  return {
    wake: (): void => {
      for (const w of [...wakers]) w();
    },
    until: (ok: () => boolean, what: () => string, timeoutMs: number): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!ok()) return;
          wakers.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          wakers.delete(check);
          reject(new Error(what()));
        }, timeoutMs);
        wakers.add(check);
        check();
      }),
  };
}
