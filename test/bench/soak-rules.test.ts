import { describe, expect, it } from 'vitest';
import { DEFAULT_RULES, growth, judge, percentile, type Sample, slope } from './soak-rules.ts';

/** Minutes 1..n: steady figures unless `at` changes them (minute 1 is the warm-up). */
function run(n: number, at: (minute: number) => Partial<Omit<Sample, 'kinds'>> & { upsertP99?: number } = () => ({})): Sample[] {
  return Array.from({ length: n }, (_, i) => {
    const minute = i + 1;
    const { upsertP99 = 20, ...rest } = at(minute);
    return {
      atMinutes: minute,
      kinds: { upsert: { count: 1200, errors: 0, p99Ms: upsertP99 }, healthz: { count: 300, errors: 0, p99Ms: 3 } },
      heapAfterGcMb: 60,
      rssMb: 150,
      backlog: 0,
      ...rest,
    };
  });
}

/** A little deterministic noise, so the rules are shown to work on series that are not perfectly straight. */
const wobble = (minute: number, mb: number) => (((minute * 7) % 5) - 2) * (mb / 2);

describe('the soak failure rules', () => {
  it('passes a steady run, and a run whose heap climbed and then levelled off', () => {
    expect(
      judge(
        run(30, (m) => ({ heapAfterGcMb: 60 + wobble(m, 1) })),
        0,
      ),
    ).toMatchObject({ pass: true, failures: [] });
    // Fast growth for the first 12 minutes (a cache filling), flat after: the second half's slope is flat.
    const filled = judge(
      run(30, (m) => ({ heapAfterGcMb: 50 + 3 * Math.min(m, 12) + wobble(m, 1) })),
      0,
    );
    expect(filled.pass).toBe(true);
    // A steep climb that stops two thirds through still has a steep second half, but the last third sets no new high.
    const late = judge(
      run(30, (m) => ({ heapAfterGcMb: 50 + 10 * Math.min(m, 20) + wobble(m, 1) })),
      0,
    );
    expect(late.pass).toBe(true);
    expect(late.notes.join('\n')).toMatch(/heap after GC: .* levelled off/);
  });

  it('fails a heap that keeps growing, naming the rate', () => {
    const v = judge(
      run(30, (m) => ({ heapAfterGcMb: 60 + 1.5 * m + wobble(m, 2) })),
      0,
    );
    expect(v.pass).toBe(false);
    expect(v.failures).toEqual([expect.stringMatching(/^heap after GC grows without bound: 1\.\d MB\/min/)]);
  });

  it('fails an RSS and a delivery backlog that keep growing, each with its own limit', () => {
    expect(
      judge(
        run(20, (m) => ({ rssMb: 150 + 4 * m })),
        0,
      ).failures,
    ).toEqual([expect.stringMatching(/^RSS grows without bound: 4\.0/)]);
    // 2 MB/min of RSS is under its limit (3): allocator noise, not a leak.
    expect(
      judge(
        run(20, (m) => ({ rssMb: 150 + 2 * m })),
        0,
      ).pass,
    ).toBe(true);
    expect(
      judge(
        run(20, (m) => ({ backlog: 100 * m })),
        0,
      ).failures,
    ).toEqual([expect.stringMatching(/^delivery backlog grows without bound: 100\.0 items\/min/)]);
  });

  it('fails a p99 that drifts past twice its start: the last third against the first third after the warm-up', () => {
    // Minute 1 (warm-up) is slow and left out; the start (minutes 2-5) is 20 ms; from minute 10 the p99 is 45 ms.
    const v = judge(
      run(15, (m) => ({ upsertP99: m === 1 ? 500 : m >= 10 ? 45 : 20 })),
      0,
    );
    expect(v.pass).toBe(false);
    expect(v.failures).toEqual([
      "upsert: p99 45.0 ms at the end (median of the last 4 interval(s), to minute 15.0), past 2x the start's 20.0 ms " +
        "(median of the first 4 after the warm-up, taken as at least 10 ms); the reference healthz's p99 moved 1.00x over the same intervals",
    ]);
  });

  it('reports slow minutes that do not move a median without failing, and ignores the warm-up and the reference', () => {
    // A stalled minute at the start, one mid-run and one among the last four (neighbours on a shared machine).
    const spike = judge(
      run(15, (m) => ({ upsertP99: m === 1 || m === 2 || m === 7 || m === 14 ? 9000 : 20 })),
      0,
    );
    expect(spike.pass).toBe(true);
    expect(spike.notes).toContainEqual(expect.stringMatching(/^upsert: 2 interval\(s\) with p99 past 40\.0 ms, but not/));
    // The stalled minute 2 does not blunt the rule either: a real drift is still caught.
    expect(
      judge(
        run(15, (m) => ({ upsertP99: m === 2 ? 9000 : m >= 10 ? 45 : 20 })),
        0,
      ).pass,
    ).toBe(false);
    const slowReference = run(15).map((s) => ({ ...s, kinds: { ...s.kinds, healthz: { count: 300, errors: 0, p99Ms: 90 } } }));
    expect(judge(slowReference, 0).pass).toBe(true);
  });

  it('takes a tiny baseline as the floor, so milliseconds of noise are no drift', () => {
    expect(
      judge(
        run(10, (m) => ({ upsertP99: m >= 5 ? 12 : 3 })),
        0,
      ).pass,
    ).toBe(true);
    expect(
      judge(
        run(10, (m) => ({ upsertP99: m >= 5 ? 25 : 3 })),
        0,
      ).pass,
    ).toBe(false);
  });

  it('fails on failed requests after the warm-up and on lost deliveries', () => {
    const errors = run(5).map((s, i) => (i === 3 ? { ...s, kinds: { ...s.kinds, upsert: { ...s.kinds.upsert!, errors: 4 } } } : s));
    expect(judge(errors, 0).failures).toEqual(['upsert: 4 request(s) failed after the warm-up']);
    expect(judge(run(5), 3).failures).toEqual(['3 delivery(ies) caused by the load never reached the receiver']);
  });

  it('judges no memory growth over a run too short to tell a leak from the start-up climb', () => {
    const short = judge(
      run(8, (m) => ({ heapAfterGcMb: 60 + 5 * m })),
      0,
    );
    expect(short.pass).toBe(true);
    expect(short.notes).toContainEqual(expect.stringMatching(/^heap after GC growth not judged: 7 interval\(s\) over 6\.0 minutes/));
  });

  it('says what it could not judge on a short run instead of passing it silently', () => {
    const v = judge(run(2), 0, DEFAULT_RULES);
    expect(v.pass).toBe(true);
    expect(v.notes).toEqual(
      expect.arrayContaining([expect.stringMatching(/^p99 drift not judged/), expect.stringMatching(/^heap after GC growth not judged/)]),
    );
  });

  it('computes slopes and percentiles exactly', () => {
    expect(slope([1, 2, 3, 4], [10, 12, 14, 16])).toBeCloseTo(2);
    expect(slope([1], [5])).toBe(0);
    expect(growth([1, 2, 3], [1, 2, 3], 0, 0)).toBeNull();
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99)).toBe(10);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50)).toBe(5);
    expect(percentile([], 99)).toBeNaN();
  });
});
