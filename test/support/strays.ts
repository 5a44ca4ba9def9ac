/**
 * The run's net under "everything a test starts, it stops": the global setup tags the test process's environment with
 * the run, every process the run starts inherits it (workers, the servers and CLIs they spawn, those servers' PostgreSQL
 * clusters), and at the run's end any tagged process still alive outside this process's own tree was left behind by a
 * test whose stop failed or never ran (a hook that timed out, a worker that died). The teardown ends them and fails the
 * run naming them, so a leak is a defect seen rather than a cluster found running a day later.
 *
 * A process given an environment of its own (`env: { ... }` without `process.env`) carries no tag and is not seen.
 */
import fs from 'node:fs/promises';
import { parentOf, signal } from './procfs.ts';

export const RUN_TAG = 'LEADWIRE_TEST_RUN';

export interface Stray {
  pid: number;
  command: string;
}

/** Live processes tagged with `run`, other than this process and its descendants (which their owners stop). */
export async function findStrays(run: string): Promise<Stray[]> {
  const tag = `${RUN_TAG}=${run}`;
  const found: Stray[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const environ = await fs.readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
    if (!environ.split('\0').includes(tag)) continue;
    if (descendsFrom(pid, process.pid)) continue;
    const command = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ').trim();
    // A zombie has no command line and nothing left to stop; its parent reaps it.
    if (command !== '') found.push({ pid, command });
  }
  return found;
}

/**
 * The strays still there after `graceMs`: a process signalled by a test that did not wait for its exit (its worker
 * gone, so it is no longer in this tree) may still be ending when the run ends, more so on a slow host; it is not a
 * leak if it ends within the grace. Looked at every 50 ms; with none, it answers at once.
 */
export async function lastingStrays(run: string, graceMs: number): Promise<Stray[]> {
  for (const until = performance.now() + graceMs; ; await new Promise((r) => setTimeout(r, 50))) {
    const strays = await findStrays(run);
    if (strays.length === 0 || performance.now() >= until) return strays;
  }
}

/** SIGKILLs them: what is left at the run's end has had its chance to stop cleanly, and SIGKILL ends even a stopped one. */
export function killStrays(strays: Stray[]): void {
  for (const { pid } of strays) signal(pid, 'SIGKILL');
}

function descendsFrom(pid: number, ancestor: number): boolean {
  for (let current = pid; current > 1; ) {
    const parent = parentOf(current);
    if (parent === undefined) return false;
    if (parent === ancestor) return true;
    current = parent;
  }
  return false;
}
