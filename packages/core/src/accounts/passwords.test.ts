import { readFileSync } from 'node:fs';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { halfTheCores } from '../config.ts';
import {
  dummyPasswordHash,
  hashPassword,
  passwordHashThreads,
  setPasswordHashCost,
  setPasswordHashSlots,
  verifyPassword,
} from './passwords.ts';

describe('password hashing cost (PASSWORD_HASH_COST)', () => {
  afterEach(() => setPasswordHashCost(17));

  it('hashes new passwords at OWASP’s floor by default, N = 2^17', async () => {
    setPasswordHashCost(17);
    expect((await hashPassword('correct horse')).split('$').slice(0, 4)).toEqual(['scrypt', '131072', '8', '1']);
    expect(dummyPasswordHash().split('$')[1]).toBe('131072');
  });

  it('uses the configured cost for new hashes and the dummy hash, and verifies each hash at the cost it carries', async () => {
    setPasswordHashCost(12);
    const cheap = await hashPassword('correct horse');
    expect(cheap.split('$')[1]).toBe('4096');
    expect(dummyPasswordHash().split('$')[1]).toBe('4096');
    setPasswordHashCost(14);
    // Raising the cost never locks out a password hashed before.
    expect(await verifyPassword('correct horse', cheap)).toBe(true);
    expect(await verifyPassword('wrong horse', cheap)).toBe(false);
    expect(await verifyPassword('correct horse', dummyPasswordHash())).toBe(false);
  });
});

/** A thread's nice value as the kernel reports it: field 19 of /proc/<pid>/task/<tid>/stat, counted after the name. */
const niceOf = (tid: number) => {
  const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
};

describe('hashing threads (issue 28: a flood of hashes never takes the CPU the API needs)', () => {
  afterEach(() => setPasswordHashSlots({ concurrency: halfTheCores(), queue: 16, maxWaitMs: 5_000 }));

  it.runIf(process.platform === 'linux')('hash on threads of their own at the lowest priority, the event loop at its own', async () => {
    setPasswordHashCost(12);
    setPasswordHashSlots({ concurrency: 2, queue: 16, maxWaitMs: 5_000 });
    const hashes = await Promise.all(['a', 'b', 'c'].map((p) => hashPassword(`correct horse ${p}`)));
    expect(await verifyPassword('correct horse b', hashes[1]!)).toBe(true);
    const threads = await passwordHashThreads();
    expect(threads).toHaveLength(2);
    for (const { tid, nice } of threads) {
      expect(tid).not.toBe(process.pid);
      expect(nice).toBe(19);
      expect(niceOf(tid!)).toBe(19);
    }
    // The event loop's thread keeps the process's priority (npm test may run the whole suite niced already).
    expect(niceOf(process.pid)).toBe(os.getPriority(process.pid));
  });

  it('by default hash on half the cores, at least one', async () => {
    expect(halfTheCores()).toBe(Math.max(1, Math.floor(os.availableParallelism() / 2)));
    setPasswordHashSlots({ concurrency: halfTheCores(), queue: 16, maxWaitMs: 5_000 });
    expect(await passwordHashThreads()).toHaveLength(halfTheCores());
  });
});
