/**
 * What one test file cost, for `npm run bench:suite`: its worker's CPU from the file's first hook to its last, with
 * the CPU of the processes it started and reaped meanwhile (spawned servers, CLIs, their clusters), but not the run's
 * shared PostgreSQL or browser. The setup file (file-outcome.ts) appends a JSON line per file to the file that
 * LEADWIRE_FILE_CPU names, and records nothing when it is unset.
 */
import { appendFileSync } from 'node:fs';
import { procStat } from './procfs.ts';

export interface FileCpu {
  /** Relative to the repository root. */
  file: string;
  cpuSeconds: number;
  wallSeconds: number;
}

/** This process's CPU seconds, its own and its reaped children's. */
function cpuSeconds(): number {
  const own = process.cpuUsage();
  return (own.user + own.system) / 1e6 + (procStat(process.pid)?.children ?? 0);
}

/** Starts measuring; the returned function tells the CPU and wall seconds since. */
export function fileMeter(): () => { cpuSeconds: number; wallSeconds: number } {
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  return () => ({ cpuSeconds: cpuSeconds() - cpu0, wallSeconds: (performance.now() - t0) / 1000 });
}

/** One line per file; lines this short are appended whole, so the workers can share the file. */
export function recordFileCpu(path: string, record: FileCpu): void {
  appendFileSync(path, `${JSON.stringify(record)}\n`);
}
