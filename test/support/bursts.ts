import type { TestClock } from '#core/clock.ts';
import { expect } from 'vitest';
import type { Runtime } from '../../apps/server/src/compose.ts';
import { serve, type TestApp } from './app.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

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

/**
 * Rate windows are minutes of the server's clock: move it to one second into the next minute, so a burst has a whole
 * window to itself. Returns when that window ends (ms since the epoch).
 */
export function freshMinute(clock: TestClock): number {
  const now = clock.now().getTime();
  const start = now - (now % MINUTE_MS) + MINUTE_MS;
  clock.set(new Date(start + 1000));
  return start + MINUTE_MS;
}

/** As `freshMinute`, for the UTC day that the daily windows count. Returns when that day ends. */
export function freshDay(clock: TestClock): number {
  const now = clock.now().getTime();
  const start = now - (now % DAY_MS) + DAY_MS;
  clock.set(new Date(start + 1000));
  return start + DAY_MS;
}

/** The start of the clock's current minute or UTC day, as the server buckets its counters. */
export function windowStart(clock: TestClock, window: 'minute' | 'day'): Date {
  const now = clock.now().getTime();
  return new Date(now - (now % (window === 'day' ? DAY_MS : MINUTE_MS)));
}

/** A header that must be a non-negative integer, as a number. */
export function intHeader(r: { status: number; headers: Headers }, name: string): number {
  const v = r.headers.get(name);
  expect(v, `${name} on ${r.status}`).toMatch(/^\d+$/);
  return Number(v);
}

export interface PeerServer {
  origin: string;
  v1: string;
  runtime: Runtime;
  close(): Promise<void>;
}

/**
 * A second server on the same database, as another process would run it: its own pool, job queue and in-memory state
 * (the spent-key and address memory included). It shares only the test's clock, so both count the same windows.
 */
export async function startPeer(t: TestApp): Promise<PeerServer> {
  const { runtime, app, origin } = await serve(t.runtime.deps.config, { clock: t.clock, migrate: false });
  return {
    origin,
    v1: `${origin}/api/v1`,
    runtime,
    close: async () => {
      await app.close();
      await runtime.close();
    },
  };
}
