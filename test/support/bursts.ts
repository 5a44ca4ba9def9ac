import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';

/** Runs `n` requests, `parallel` at a time, keeping results in request order. */
export async function burst<T>(n: number, parallel: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

/** Rate windows are wall-clock minutes: start a burst only when it can finish inside the current one. */
export async function freshMinute(needMs: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await sleep(left + 250);
}

/** A header that must be a non-negative integer, as a number. */
export function intHeader(r: { status: number; headers: Headers }, name: string): number {
  const v = r.headers.get(name);
  expect(v, `${name} on ${r.status}`).toMatch(/^\d+$/);
  return Number(v);
}
