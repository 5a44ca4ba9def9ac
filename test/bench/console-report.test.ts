/**
 * `npm run bench:console` prints the bundle against its budget and each first screen against the reference of the
 * same run. The report is a pure function of the figures, checked here on made-up ones (the bench drives a browser).
 */
import { describe, expect, it } from 'vitest';
import { type ConsoleFigures, formatConsole, stats } from './console-report.ts';

const load = (medianMs: number, p95Ms: number, requests: number, bytes: number, fromCache = 0) => ({
  runs: 20,
  medianMs,
  p95Ms,
  requests,
  fromCache,
  bytes,
});

const figures = (gzipBytes: number): ConsoleFigures => ({
  bundle: {
    files: [
      { file: 'console.css', bytes: 4512, gzipBytes: 1581 },
      { file: 'console.js', bytes: 54677, gzipBytes: gzipBytes - 1581 },
    ],
    gzipBytes,
    gzipBudget: 40_000,
  },
  reference: load(50, 80, 1, 237),
  cold: load(200, 260, 4, 23_596),
  warm: load(100, 150, 4, 1879, 2),
  signedIn: load(900, 1000, 2, 1530),
  signInApi: { runs: 20, medianMs: 700, p95Ms: 800 },
  cpuPerFirstScreen: { serverMs: 12.5, postgresMs: 1.25 },
  cpuPerReference: { serverMs: 2.5, postgresMs: 0.5 },
});

describe('stats', () => {
  it('takes the median (the mean of the middle two of an even count) and the nearest-rank p95', () => {
    expect(stats([5, 1, 3])).toEqual({ runs: 3, medianMs: 3, p95Ms: 5 });
    expect(stats([4, 1, 3, 2])).toEqual({ runs: 4, medianMs: 2.5, p95Ms: 4 });
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(stats(hundred)).toEqual({ runs: 100, medianMs: 50.5, p95Ms: 95 });
    expect(stats([])).toEqual({ runs: 0, medianMs: 0, p95Ms: 0 });
  });
});

describe('formatConsole', () => {
  it('prints sizes against the budget, each load with its ratio to the reference, traffic, cache hits and CPU', () => {
    const text = formatConsole(figures(20_853));
    expect(text).toContain('total gzipped 20.4 KB of the 39.1 KB budget (52%): within');
    expect(text).toMatch(/reference: GET \/healthz, cold\s+median\s+50 ms, p95\s+80 ms \(1 request, 0\.2 KB received\)/);
    expect(text).toMatch(
      /\/app to sign-in heading, cold\s+median\s+200 ms, p95\s+260 ms \(4\.0x the reference's median; 4 requests, 23\.0 KB received\)/,
    );
    expect(text).toContain("(2.0x the reference's median; 4 requests, 2 from the cache, 1.8 KB received)");
    expect(text).toMatch(/of which the sign-in call alone\s+median\s+700 ms/);
    expect(text).toContain(
      'CPU per cold first screen: server 12.50 ms, postgres 1.25 ms (per reference load, measured alike: server 2.50 ms, postgres 0.50 ms)',
    );
  });

  it('says OVER when the bundle passes its budget, and says so when CPU could not be measured', () => {
    const text = formatConsole({ ...figures(41_000), cpuPerFirstScreen: null, cpuPerReference: null });
    expect(text).toContain('budget (103%): OVER');
    expect(text).toContain('CPU per cold first screen: not measured (no /proc)');
  });
});
