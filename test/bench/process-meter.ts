import { readdirSync, readFileSync } from 'node:fs';
import { type ProcStat, procStat } from '../support/procfs.ts';
import { type Part, partOf } from './suite-report.ts';

interface Seen {
  pid: number;
  ppid: number;
  part: Part;
  /** Own CPU seconds and its reaped children's, as last read. */
  own: number;
  children: number;
  /** The same when the meter started, for the processes there already (the root's own among them); 0 for those born since. */
  own0: number;
  children0: number;
  /** What the meter saw of the children this one reaped, at their last sample (counted as theirs already). */
  seenChildren: number;
}

export interface PartTotals {
  parts: { part: Part; cpuSeconds: number; processes: number }[];
  /** The meter's own process: its sweeps of /proc, and whatever else it did meanwhile. */
  selfSeconds: number;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/**
 * CPU by part of everything this process starts from now on (its descendants), from sweeps of /proc every
 * `intervalMs` until `stop()`. A process is told apart by its command line when first seen (partOf). One that lives
 * between two sweeps is never seen: its CPU is found in its parent's count of reaped children, less what the meter
 * saw of the parent's other children; it is PostgreSQL's when that parent is (a short session), `short-lived
 * processes` otherwise.
 */
export function processMeter(intervalMs: number): { stop(): PartTotals } {
  const root = process.pid;
  const seen = new Map<string, Seen>();
  /** Processes outside the tree, by key, so that their command lines are read once. */
  const outside = new Set<string>();
  let alive = new Set<string>();
  let first = true;
  const cpu0 = process.cpuUsage();

  const sweep = () => {
    const now = new Set<string>();
    const fresh: { key: string; pid: number; s: ProcStat }[] = [];
    for (const entry of readdirSync('/proc')) {
      if (entry.charCodeAt(0) > 57) continue;
      const s = procStat(entry);
      if (!s) continue;
      const key = `${entry}:${s.started}`;
      if (outside.has(key)) continue;
      const known = seen.get(key);
      if (!known) {
        fresh.push({ key, pid: Number(entry), s });
        continue;
      }
      now.add(key);
      // A process whose parent ended is reaped by another (init, a subreaper): the one whose count it joins.
      known.ppid = s.ppid;
      known.own = s.own;
      known.children = s.children;
    }
    // New processes join the tree through a parent in it, which may itself be new in this sweep.
    const inTree = new Set([...now].map((key) => seen.get(key)!.pid));
    for (let grew = true; grew; ) {
      grew = false;
      for (const f of fresh) {
        if (seen.has(f.key) || !(f.pid === root || inTree.has(f.s.ppid))) continue;
        seen.set(f.key, {
          pid: f.pid,
          ppid: f.s.ppid,
          part: partOf(f.s.comm, cmdline(f.pid)),
          own: f.s.own,
          children: f.s.children,
          own0: first ? f.s.own : 0,
          children0: first ? f.s.children : 0,
          seenChildren: 0,
        });
        now.add(f.key);
        inTree.add(f.pid);
        grew = true;
      }
    }
    for (const f of fresh) if (!seen.has(f.key)) outside.add(f.key);

    // The ones gone since the last sweep were reaped by their parent or, when it ended too, by the nearest ancestor
    // still running, whose count of reaped children then holds both.
    const gone = [...alive].filter((key) => !now.has(key)).map((key) => seen.get(key)!);
    const goneByPid = new Map(gone.map((g) => [g.pid, g]));
    const aliveByPid = new Map([...now].map((key) => [seen.get(key)!.pid, seen.get(key)!]));
    for (const g of gone) {
      let ppid = g.ppid;
      for (let hops = 0; goneByPid.has(ppid) && hops < 64; hops++) ppid = goneByPid.get(ppid)!.ppid;
      const reaper = aliveByPid.get(ppid);
      if (reaper) reaper.seenChildren += g.own - g.own0 + g.children - g.children0;
    }
    alive = now;
    first = false;
  };

  sweep();
  const timer = setInterval(sweep, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sweep();
      const totals = new Map<Part, { cpuSeconds: number; processes: number }>();
      const add = (part: Part, cpu: number, processes: number) => {
        const t = totals.get(part) ?? { cpuSeconds: 0, processes: 0 };
        t.cpuSeconds += cpu;
        t.processes += processes;
        totals.set(part, t);
      };
      for (const p of seen.values()) {
        // The root's own CPU is the meter's (selfSeconds); what it reaped unseen is the run's.
        if (p.pid !== root) add(p.part, p.own - p.own0, 1);
        const unseen = p.children - p.children0 - p.seenChildren;
        if (unseen > 0.005) add(p.part === 'PostgreSQL' ? 'PostgreSQL' : 'short-lived processes', unseen, 0);
      }
      const self = process.cpuUsage(cpu0);
      return {
        parts: [...totals].map(([part, t]) => ({ part, ...t })),
        selfSeconds: (self.user + self.system) / 1e6,
      };
    },
  };
}
