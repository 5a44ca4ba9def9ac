import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { procStat, TICKS_PER_SECOND } from '../support/procfs.ts';

/** CPU seconds spent during a phase, by whom. "other" is everything else on the machine (e.g. a test run). */
export interface CpuShare {
  seconds: number;
  cores: number;
  /** Average cores busy, per consumer. */
  machine: number;
  server: number;
  postgres: number;
  loadGenerator: number;
  other: number;
}

interface Sample {
  at: number;
  machineBusy: number;
  server: number;
  postgres: number;
  self: number;
}

export function machineBusySeconds(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

/** The postmaster, every live backend and auxiliary process, and the backends that already exited (reaped). */
function postgresSeconds(postmaster: number): number {
  const main = procStat(postmaster);
  if (!main) return 0;
  let total = main.own + main.children;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === postmaster) continue;
    const t = procStat(pid);
    if (t && t.ppid === postmaster) total += t.own;
  }
  return total;
}

/** Starts measuring; the returned function ends the measurement. Returns null where /proc is missing. */
export function cpuMeter(serverPid: number, postmasterPid: number): () => CpuShare | null {
  const take = (): Sample | null => {
    const server = procStat(serverPid);
    if (!server) return null;
    const self = process.cpuUsage();
    return {
      at: performance.now(),
      machineBusy: machineBusySeconds(),
      server: server.own,
      postgres: postgresSeconds(postmasterPid),
      self: (self.user + self.system) / 1e6,
    };
  };
  let start: Sample | null = null;
  try {
    start = take();
  } catch {
    start = null;
  }
  return () => {
    const end = start ? take() : null;
    if (!start || !end) return null;
    const seconds = (end.at - start.at) / 1000;
    const per = (a: number, b: number) => Math.max(0, b - a) / seconds;
    const machine = per(start.machineBusy, end.machineBusy);
    const server = per(start.server, end.server);
    const postgres = per(start.postgres, end.postgres);
    const loadGenerator = per(start.self, end.self);
    return {
      seconds,
      cores: os.cpus().length,
      machine,
      server,
      postgres,
      loadGenerator,
      other: Math.max(0, machine - server - postgres - loadGenerator),
    };
  };
}

/** The embedded cluster's postmaster, from the first line of its pid file. */
export function postmasterPid(dataDir: string): number {
  return Number.parseInt(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
}

/** Cores busy on the whole machine over `ms`: a pre-flight check that nothing else is competing for them. */
export async function machineBusyCores(ms: number): Promise<number | null> {
  try {
    const a = machineBusySeconds();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, ms));
    return (machineBusySeconds() - a) / ((performance.now() - t0) / 1000);
  } catch {
    return null;
  }
}
