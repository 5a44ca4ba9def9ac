import { describe, expect, it } from 'vitest';
import { gcTracker, heapAfterMarkCompact, metricValue } from './soak-watch.ts';

describe("the soak's readings of the server", () => {
  it('reads an unlabelled metric and sums a labelled one from the Prometheus text', () => {
    const text = [
      '# HELP process_resident_memory_bytes Resident memory size in bytes.',
      'process_resident_memory_bytes 157286400',
      'process_resident_memory_bytes_extra 1',
      'leadwire_queue_ready_jobs{queue="deliver"} 3',
      'leadwire_queue_ready_jobs{queue="dispatch"} 4',
    ].join('\n');
    expect(metricValue(text, 'process_resident_memory_bytes')).toBe(157286400);
    expect(metricValue(text, 'leadwire_queue_ready_jobs')).toBe(7);
    expect(metricValue(text, 'leadwire_outbox_pending')).toBeNaN();
  });

  it("takes the heap a full collection left from V8's --trace-gc lines, and keeps it through an interval without one", () => {
    const full = (after: string) =>
      `[4242:0x164a9000]    29612 ms: Mark-Compact 126.7 (156.1) -> ${after} (150.0) MB, pooled: 0 MB, 8.45 / 0.00 ms  (average mu = 0.967) finalize incremental marking via stack guard; GC in old space requested`;
    expect(heapAfterMarkCompact(full('80.6'))).toBe(80.6);
    expect(heapAfterMarkCompact('[1:0x1]  5 ms: Mark-Compact (reduce) 50.0 (60.0) -> 41.5 (55.0) MB, 3 ms')).toBe(41.5);
    const gc = gcTracker();
    expect(gc.onLine(full('80.5'))).toBe(true);
    expect(gc.onLine(full('88.0'))).toBe(true);
    // Another GC line (a minor mark-sweep) is kept off the output but is no full collection; a log line is not GC's.
    expect(gc.onLine('[4242:0x164a9000]    29700 ms: Minor Mark-Sweep 120.0 (150.0) -> 100.0 (150.0) MB')).toBe(true);
    expect(gc.onLine('{"level":40,"msg":"a warning"}')).toBe(false);
    expect(gc.take()).toEqual({ heapAfterGcMb: 88, fullGcs: 2 });
    expect(gc.onLine(full('95.0'))).toBe(true);
    expect(gc.onLine(full('91.0'))).toBe(true);
    expect(gc.take()).toEqual({ heapAfterGcMb: 91, fullGcs: 2 });
    expect(gc.take()).toEqual({ heapAfterGcMb: 91, fullGcs: 0 });
  });
});
