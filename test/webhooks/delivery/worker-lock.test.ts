/**
 * The worker lock takes its key again after its connection dropped (PostgreSQL restarting), after a pause measured on
 * the server clock: the test moves the clock through it.
 */
import { TestClock } from '#core/clock.ts';
import { WorkerLock } from '#core/webhooks/delivery/worker-lock.ts';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

/** The backend holding the session-level advisory lock on `key`, as sweep.ts reads pg_locks. */
async function holder(key: string): Promise<number | undefined> {
  const rows = await t.sql<{ pid: number }>(
    `select pid from pg_locks where locktype = 'advisory' and granted and objsubid = 1
       and ((classid::bigint << 32) | objid::bigint) = ?::bigint`,
    [key],
  );
  return rows[0]?.pid;
}

/**
 * A lock on a frozen clock whose connection was just ended, as a PostgreSQL restart ends it, with its relock pause
 * pending; `run` sees it in that state, and the lock is released after it (and must then be gone from pg_locks).
 */
async function afterDrop(run: (lock: WorkerLock, clock: TestClock, pid: number) => Promise<void>): Promise<WorkerLock> {
  const clock = new TestClock();
  clock.freeze();
  const lock = new WorkerLock(t.runtime.deps.db, t.runtime.deps.log, clock);
  try {
    await lock.acquire();
    const pid = await holder(lock.key);
    expect(pid).toBeTypeOf('number');
    await t.sql('select pg_terminate_backend(?)', [pid]);
    await vi.waitFor(() => expect(lock.held).toBe(false), { timeout: 5_000 });
    // The pause is a timer of the clock, so the frozen clock holds it until moved.
    expect(clock.timers).toBe(1);
    await run(lock, clock, pid!);
  } finally {
    await lock.release();
  }
  expect(await holder(lock.key)).toBeUndefined();
  return lock;
}

it('takes its key again once the relock pause has passed on the clock', async () => {
  await afterDrop(async (lock, clock, pid) => {
    clock.advance(500);
    await vi.waitFor(() => expect(lock.held).toBe(true), { timeout: 5_000 });
    expect(await holder(lock.key)).not.toBe(pid);
  });
});

it('a job that asks before the relock pause has passed takes the key at once (ready), and none after release', async () => {
  const lock = await afterDrop(async (lock, _clock, pid) => {
    // PostgreSQL is back (it never left here) and a delivery job came: it must not wait for the frozen pause, nor drop
    // its attempts to the sweeper (they would go out again only after their 30 s lease).
    expect(await lock.ready()).toBe(true);
    expect(lock.held).toBe(true);
    expect(await holder(lock.key)).toBeTypeOf('number');
    expect(await holder(lock.key)).not.toBe(pid);
  });
  expect(await lock.ready()).toBe(false);
});
