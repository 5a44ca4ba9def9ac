/**
 * Linux's /proc, as the tests read it to follow processes: a cluster's backends, whether one is stopped or gone, the
 * parent of a process left behind; and signals to processes that may be gone. The files are the kernel's and tiny, so they are read synchronously.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Linux reports CPU times (a process's here, the machine's in /proc/stat) in clock ticks; 100 per second on every
 * mainstream kernel build.
 */
export const TICKS_PER_SECOND = 100;

/** `/proc/<pid>/stat` split: the command name, and the fields after it. */
function readStat(pid: number | string): { comm: string; fields: string[] } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: it ends at the last ')'.
  const end = stat.lastIndexOf(')');
  return { comm: stat.slice(stat.indexOf('(') + 1, end), fields: stat.slice(end + 2).split(' ') };
}

/**
 * The fields of `/proc/<pid>/stat` from the state on (the state, the parent pid, …; proc(5) numbers them from 3), or
 * undefined once the process is gone.
 */
export function statFields(pid: number): string[] | undefined {
  return readStat(pid)?.fields;
}

/** A process as `/proc/<pid>/stat` tells it; undefined once it is gone. */
export interface ProcStat {
  comm: string;
  ppid: number;
  /** CPU seconds of its own, and of its children it reaped (theirs included). */
  own: number;
  children: number;
  /** When it started, in clock ticks since boot: with the pid, what tells it from a later process of the same pid. */
  started: string;
}

export function procStat(pid: number | string): ProcStat | undefined {
  const stat = readStat(pid);
  if (!stat) return undefined;
  // proc(5)'s field n is fields[n - 3].
  const n = (i: number) => Number(stat.fields[i - 3] ?? 0);
  return {
    comm: stat.comm,
    ppid: n(4),
    own: (n(14) + n(15)) / TICKS_PER_SECOND,
    children: (n(16) + n(17)) / TICKS_PER_SECOND,
    started: stat.fields[19] ?? '',
  };
}

/** The parent pid, or undefined once the process is gone. */
export function parentOf(pid: number): number | undefined {
  const parent = statFields(pid)?.[1];
  return parent === undefined ? undefined : Number(parent);
}

/** Not gone and not a zombie (an orphan that ended, which init reaps in its own time, still takes signals). */
export function isRunning(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** Every process whose parent is `pid` (a postmaster's backends and auxiliary processes, say). */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && parentOf(Number(entry)) === pid)
    .map(Number);
}

/** Sends `sig` to a process that may have ended since it was found. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Gone already.
  }
}
