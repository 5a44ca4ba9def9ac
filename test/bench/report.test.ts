/**
 * `npm run bench` prints issue 19's goals for the single upsert (section 4): 20% of the ceiling in the same run,
 * PostgreSQL and server CPU per upsert, p99 at 50 connections; and the writes PostgreSQL made per request. The report
 * is a pure function of the figures, checked here on made-up ones (the bench itself takes minutes).
 */
import { describe, expect, it } from 'vitest';
import type { CpuShare } from './cpu.ts';
import type { HttpPhaseResult } from './http-load.ts';
import { formatReport, goals, type Report } from './report.ts';
import type { WriteProfile } from './write-profile.ts';

const cpu = (server: number, postgres: number): CpuShare => ({
  seconds: 10,
  cores: 2,
  machine: server + postgres + 0.1,
  server,
  postgres,
  loadGenerator: 0.1,
  other: 0,
});

function phase(name: string, reqPerSec: number, p99: number, c: CpuShare, writes: WriteProfile | null = null): HttpPhaseResult {
  return {
    name,
    connections: 50,
    seconds: 10,
    ok: reqPerSec * 10,
    reqPerSec,
    contactsPerSec: reqPerSec,
    latencyMs: { p50: p99 / 3, p90: p99 / 2, p99, max: p99 * 2 },
    non2xx: 0,
    status429: 0,
    statusCodes: { 200: reqPerSec * 10 },
    errors: 0,
    timeouts: 0,
    rows: { created: reqPerSec * 5, updated: reqPerSec * 5, failed: 0 },
    cpu: c,
    writes,
    requests: reqPerSec * 10,
  };
}

const report = (upsert: HttpPhaseResult): Report => ({
  reference: null,
  ceiling: phase('upsert', 5000, 20, cpu(0.5, 0.5)),
  services: null,
  upsert,
  batch: null,
  limits: null,
  batchSize: 100,
});

describe('the bench report', () => {
  it("judges the single upsert by issue 19's goals: share of the ceiling, CPU per upsert, p99", () => {
    // 1,000 req/s at 0.4 server cores and 0.5 PostgreSQL cores: 0.4 and 0.5 ms per upsert, 20% of 5,000.
    const met = goals(report(phase('upsert', 1000, 45, cpu(0.4, 0.5))));
    const byGoal = Object.fromEntries(met.map((g) => [g.goal, g]));
    expect(byGoal['single upserts >= 20.0% of the ceiling (same run)']).toMatchObject({ value: '20.0%', met: true });
    expect(byGoal['PostgreSQL CPU per single upsert <= 0.60 ms']).toMatchObject({ value: '0.50 ms', met: true });
    expect(byGoal['server CPU per single upsert <= 0.45 ms']).toMatchObject({ value: '0.40 ms', met: true });
    expect(byGoal['single upsert p99 <= 50 ms at 50 connections']).toMatchObject({ value: '45.0 ms', met: true });
    // The withdrawn goal is gone.
    expect(met.map((g) => g.goal).join('\n')).not.toMatch(/of pgbench/);

    const missed = goals(report(phase('upsert', 500, 120, cpu(0.5, 0.6))));
    const judged = Object.fromEntries(missed.map((g) => [g.goal, g.met]));
    expect(judged).toMatchObject({
      'single upserts >= 20.0% of the ceiling (same run)': false,
      'PostgreSQL CPU per single upsert <= 0.60 ms': false,
      'server CPU per single upsert <= 0.45 ms': false,
      'single upsert p99 <= 50 ms at 50 connections': false,
    });
    expect(formatReport(report(phase('upsert', 500, 120, cpu(0.5, 0.6))))).toMatch(
      /MISSED {2}server CPU per single upsert <= 0\.45 ms: 1\.00 ms/,
    );
  });

  it('prints what PostgreSQL wrote per request, with the index entries the rows imply', () => {
    const writes: WriteProfile = {
      walRecords: 23_000,
      walBytes: 3_900_000,
      walFpi: 0,
      commits: 2_700,
      tables: [{ table: 'outbox_events', inserted: 2_700, updated: 0, hot: 0, deleted: 0, indexEntries: 8_100 }],
    };
    const text = formatReport(report(phase('upsert', 100, 45, cpu(0.1, 0.1), writes)));
    expect(text).toContain('upsert: per request 2.70 commits, 23.00 WAL records, 3900 WAL bytes (0.00 full-page images)');
    expect(text).toMatch(/outbox_events +inserted 2\.70, updated 0\.00 \(HOT 0\.00\), deleted 0\.00; index entries up to 8\.10/);
  });
});
