/**
 * `npm run bench:suite` divides a run's CPU among its parts by sweeping /proc (process-meter.ts). Whatever the sweeps
 * see, what it counts must add up to what the kernel counted for everything the process started, short-lived
 * processes included (they show in their parent's count of reaped children).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processMeter } from './process-meter.ts';

/** The CPU seconds of this process's reaped children and theirs, as the kernel counts it. */
function reapedCpu(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / 100;
}

const LONG_CHILD =
  'let x = 0; for (let i = 0; i < 4e7; i++) x += i; const u = process.cpuUsage(); console.log(JSON.stringify({ cpuSeconds: (u.user + u.system) / 1e6, x }))';

describe('the process meter', () => {
  it('counts what this process starts, seen or too short to be, as the kernel does; a long child by its part', async () => {
    const before = reapedCpu();
    const meter = processMeter(50);
    // A shell with one child long enough to be seen (some 0.3 s of CPU, printing its own), then ten that hash 16 MB
    // each (some 30 ms of CPU), most of them between two sweeps.
    const shell = spawn(
      'sh',
      ['-c', `"${process.execPath}" -e '${LONG_CHILD}'; for i in $(seq 10); do head -c 16000000 /dev/zero | sha256sum >/dev/null; done`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    shell.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const code = await new Promise((resolve) => shell.once('close', resolve));
    const { parts } = meter.stop();
    const counted = reapedCpu() - before;

    expect(code).toBe(0);
    const total = parts.reduce((sum, p) => sum + p.cpuSeconds, 0);
    // The same ticks (10 ms) counted twice over, or a short process lost, would show here: a good part of the CPU was
    // used by processes the sweeps saw only in part or not at all.
    expect(Math.abs(total - counted)).toBeLessThanOrEqual(0.05);
    expect(parts.find((p) => p.part === 'short-lived processes')?.cpuSeconds).toBeGreaterThan(0);
    const node = parts.find((p) => p.part === 'other Node processes');
    expect(node?.processes).toBe(1);
    // Seen until its last sweep: all of its CPU but what it used after that.
    const ownCpu = (JSON.parse(out) as { cpuSeconds: number }).cpuSeconds;
    expect(node!.cpuSeconds).toBeLessThanOrEqual(ownCpu + 0.02);
    expect(parts.find((p) => p.part === 'other programs')?.processes).toBeGreaterThanOrEqual(1);
  });
});
