/**
 * `npm run bench:suite` tells each test file's cost from what the setup file records (file-cpu.ts): the worker's CPU
 * and that of the processes the file started, as lines the workers append to one file.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FileCpu, fileMeter, recordFileCpu } from './file-cpu.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'leadwire-file-cpu-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A child that spends about `loops` x 10 million additions of CPU and prints its own CPU seconds. */
function busyChild(loops: number): Promise<number> {
  const code = `let x = 0; for (let i = 0; i < ${loops}e7; i++) x += i; const u = process.cpuUsage(); console.log((u.user + u.system) / 1e6, x > 0)`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', reject);
    child.once('close', () => resolve(Number(out.split(' ')[0])));
  });
}

describe('a test file’s cost', () => {
  it('counts the worker’s own CPU and that of the processes it started and reaped', async () => {
    const finish = fileMeter();
    const own = process.cpuUsage();
    for (let x = 0, i = 0; i < 3e7; i++) x += i;
    const used = process.cpuUsage(own);
    const ownSeconds = (used.user + used.system) / 1e6;
    const childSeconds = (await busyChild(3)) + (await busyChild(2));
    const { cpuSeconds, wallSeconds } = finish();
    // Ticks of 10 ms on the children's side; the worker's other threads (its GC) only add.
    expect(cpuSeconds).toBeGreaterThanOrEqual(ownSeconds + childSeconds - 0.03);
    expect(wallSeconds).toBeGreaterThan(0);
  });

  it('appends one JSON line per file, whole', async () => {
    const path = join(dir, 'files.jsonl');
    const records: FileCpu[] = [
      { file: 'test/a.test.ts', cpuSeconds: 1.5, wallSeconds: 2 },
      { file: 'test/b.test.ts', cpuSeconds: 0.25, wallSeconds: 0.5 },
    ];
    for (const r of records) recordFileCpu(path, r);
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as FileCpu)).toEqual(records);
  });
});
