import { describe, expect, it } from 'vitest';
import { RefusalPacer } from './refusal-pacer.ts';

describe('RefusalPacer', () => {
  it('answers an address its first refusals of each second at once and holds the rest', () => {
    const pacer = new RefusalPacer({ freePerSecond: 3, delayMs: 1000 });
    const at = 1_700_000_000_000;
    expect([1, 2, 3, 4, 5].map(() => pacer.delayFor('203.0.113.1', at))).toEqual([0, 0, 0, 1000, 1000]);
    // Another address has its own allowance, and the next second starts afresh.
    expect(pacer.delayFor('203.0.113.2', at)).toBe(0);
    expect(pacer.delayFor('203.0.113.1', at + 1000)).toBe(0);
  });

  it('holds nothing when the delay is 0, and remembers a bounded number of addresses', () => {
    expect(new RefusalPacer({ freePerSecond: 1, delayMs: 0 }).delayFor('a', 0)).toBe(0);
    const pacer = new RefusalPacer({ freePerSecond: 1, delayMs: 10 });
    for (let i = 0; i < 10_050; i++) pacer.delayFor(`10.0.${i >> 8}.${i & 255}`, 0);
    expect(pacer.size).toBe(10_000);
  });
});
