/**
 * What `npm run bench:suite` prints, as pure functions of what it measured (checked on made-up figures by
 * suite-report.test.ts; the bench itself runs the whole suite for minutes).
 */
import type { FileCpu } from '../support/file-cpu.ts';
import type { Tier } from '../support/tiers.ts';

/** The parts of a test run, as the bench tells processes apart (by command line, else by name). */
export type Part =
  | 'vitest workers'
  | 'vitest main process'
  | 'spawned servers'
  | 'admin and migrate CLIs'
  | 'other Node processes'
  | 'PostgreSQL'
  | 'Chromium'
  | 'type check and lint'
  | 'format check'
  | 'esbuild'
  | 'other programs'
  | 'short-lived processes';

/** The server, the programs that make and start a cluster, and the pooler some tests put in front of it. */
const POSTGRES_PROGRAMS = ['postgres', 'initdb', 'pg_ctl', 'pgbouncer'];

/** The part a process belongs to, from its name (`/proc/<pid>/comm`) and its command line (arguments joined by spaces). */
export function partOf(comm: string, cmdline: string): Part {
  const program = cmdline.split(' ')[0]?.split('/').pop() ?? '';
  if ([comm, program].some((name) => POSTGRES_PROGRAMS.includes(name))) return 'PostgreSQL';
  if (/chrom/i.test(comm) || program.includes('chromium')) return 'Chromium';
  if (/oxlint|tsgolint/.test(comm) || /\/(oxlint|tsgolint)( |$)/.test(cmdline) || /static-checks\.ts/.test(cmdline))
    return 'type check and lint';
  if (/biome/.test(comm) || /\/biome( |$)/.test(cmdline)) return 'format check';
  if (comm === 'esbuild') return 'esbuild';
  if (/vitest\/suppress-warnings\.cjs|vitest\/dist\/workers/.test(cmdline)) return 'vitest workers';
  if (/\.bin\/vitest( |$)|vitest\.mjs|npm-test\.ts/.test(cmdline) || comm === 'vitest-watchdog') return 'vitest main process';
  if (/apps\/server\/src\/main\.ts/.test(cmdline)) return 'spawned servers';
  if (/apps\/server\/src\/(admin|migrate)\.ts/.test(cmdline)) return 'admin and migrate CLIs';
  if ([comm, program].includes('node') || comm === 'MainThread' || comm === 'npm') return 'other Node processes';
  return 'other programs';
}

export interface SuiteFigures {
  /** `npm test` or `npm run test:quick`. */
  command: string;
  cores: number;
  /** Its goal on the 2-core machine the suite is sized for (seconds). */
  goalSeconds: number;
  passed: boolean;
  wallSeconds: number;
  /** Every process's CPU on the machine over the run, the idle time left out (from /proc/stat). */
  machineCpuSeconds: number;
  /**
   * CPU seconds and processes seen, by part. A process that lived between two samples is not seen itself: its CPU shows
   * in its parent's count of reaped children, and is counted with PostgreSQL's when that parent is a postmaster (a
   * short session), as `short-lived processes` otherwise.
   */
  parts: { part: Part; cpuSeconds: number; processes: number }[];
  /** Machine CPU no part accounts for: other processes on the machine, the kernel's own work. */
  unattributedSeconds: number;
  /** The bench's own sampling. */
  benchCpuSeconds: number;
  reference: { wallSeconds: number; cpuSeconds: number; processes: number };
  /** What each test file cost (test/support/file-cpu.ts), with its tier; empty when none was recorded. */
  files: (FileCpu & { tier: Tier })[];
}

const s = (n: number) => `${n.toFixed(1)} s`;
const pct = (a: number, b: number) => (b > 0 ? `${((100 * a) / b).toFixed(0)} %` : 'n/a');

export function formatSuite(f: SuiteFigures): string {
  const ratio = f.reference.wallSeconds > 0 ? f.wallSeconds / f.reference.wallSeconds : 0;
  const met = f.wallSeconds <= f.goalSeconds;
  const busyCores = f.wallSeconds > 0 ? f.machineCpuSeconds / f.wallSeconds : 0;
  const lines = [
    `reference: ${f.reference.processes} processes at once, each the same fixed work (JSON, gzip, SHA-256): ${s(f.reference.wallSeconds)}, ` +
      `${s(f.reference.cpuSeconds)} of CPU`,
    `${f.command} ${f.passed ? 'passed' : 'FAILED'} in ${s(f.wallSeconds)}: ${ratio.toFixed(1)}x the reference ` +
      `(goal: at most ${f.goalSeconds} s on 2 cores: ${met ? 'met' : 'missed'}${f.cores === 2 ? '' : `; this machine has ${f.cores} cores`})`,
    `machine CPU ${s(f.machineCpuSeconds)}: ${busyCores.toFixed(2)} of ${f.cores} cores busy on average (${pct(busyCores, f.cores)})`,
    '',
    `${'part'.padEnd(26)}${'CPU'.padStart(9)}${'share'.padStart(8)}${'processes'.padStart(11)}`,
  ];
  for (const p of [...f.parts].sort((a, b) => b.cpuSeconds - a.cpuSeconds)) {
    if (p.cpuSeconds < 0.05 && p.processes === 0) continue;
    lines.push(
      `${p.part.padEnd(26)}${s(p.cpuSeconds).padStart(9)}${pct(p.cpuSeconds, f.machineCpuSeconds).padStart(8)}${p.processes.toLocaleString('en').padStart(11)}`,
    );
  }
  lines.push(
    `${'the rest of the machine'.padEnd(26)}${s(f.unattributedSeconds).padStart(9)}${pct(f.unattributedSeconds, f.machineCpuSeconds).padStart(8)}`,
  );
  lines.push(
    `${"the bench's own sampling".padEnd(26)}${s(f.benchCpuSeconds).padStart(9)}${pct(f.benchCpuSeconds, f.machineCpuSeconds).padStart(8)}`,
  );
  return lines.join('\n');
}

/** The tiers' totals and the costliest files, by CPU. */
export function formatFiles(files: SuiteFigures['files'], top = 15): string {
  if (files.length === 0) return '';
  const tiers = new Map<Tier, { cpu: number; n: number }>();
  for (const f of files) {
    const t = tiers.get(f.tier) ?? { cpu: 0, n: 0 };
    t.cpu += f.cpuSeconds;
    t.n += 1;
    tiers.set(f.tier, t);
  }
  const lines = [
    'by test file: the worker’s CPU with that of what the file started (spawned servers, CLIs, their clusters), not the',
    "run's PostgreSQL or browser",
    `  ${[...tiers].map(([tier, t]) => `${tier} ${s(t.cpu)} in ${t.n} file${t.n === 1 ? '' : 's'}`).join(', ')}`,
    `  ${'CPU'.padStart(8)}${'wall'.padStart(9)}  file (the ${Math.min(top, files.length)} costliest of ${files.length})`,
  ];
  for (const f of [...files].sort((a, b) => b.cpuSeconds - a.cpuSeconds).slice(0, top)) {
    lines.push(`  ${s(f.cpuSeconds).padStart(8)}${s(f.wallSeconds).padStart(9)}  ${f.file}`);
  }
  return lines.join('\n');
}

/** `BENCH_RESULT`'s object. */
export function suiteJson(f: SuiteFigures): object {
  return {
    command: f.command,
    passed: f.passed,
    wallSeconds: round(f.wallSeconds),
    goalSeconds: f.goalSeconds,
    goalMet: f.wallSeconds <= f.goalSeconds,
    ratioToReference: f.reference.wallSeconds > 0 ? round(f.wallSeconds / f.reference.wallSeconds) : null,
    machineCpuSeconds: round(f.machineCpuSeconds),
    parts: Object.fromEntries(f.parts.map((p) => [p.part, { cpuSeconds: round(p.cpuSeconds), processes: p.processes }])),
    unattributedSeconds: round(f.unattributedSeconds),
    reference: { wallSeconds: round(f.reference.wallSeconds), cpuSeconds: round(f.reference.cpuSeconds) },
    files: Object.fromEntries(
      f.files.map((file) => [file.file, { cpuSeconds: round(file.cpuSeconds), wallSeconds: round(file.wallSeconds) }]),
    ),
  };
}

const round = (n: number) => Math.round(n * 10) / 10;
