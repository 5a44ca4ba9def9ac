/**
 * Linux's /proc, as the tests read it to follow processes: a cluster's backends, whether one is stopped or gone, the
 * parent of a process left behind; and signals to processes that may be gone. The files are the kernel's and tiny, so they are read synchronously.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The fields of `/proc/<pid>/stat` from the state on (the state, the parent pid, …; proc(5) numbers them from 3), or
 * undefined once the process is gone. The command name before them may hold spaces and parentheses: it ends at the
 * last ')'.
 */
export function statFields(pid: number): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
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
