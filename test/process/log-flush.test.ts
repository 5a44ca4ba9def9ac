import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, createReadStream, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('./fixtures/log-burst.ts', import.meta.url));
let dir: string | undefined;
let child: ChildProcess | undefined;
afterAll(async () => {
  // A test that failed before reading leaves the fixture writing to a pipe nobody reads: it is ended here.
  if (child && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

// The server's last lines (`http closed…`, `job queue stopped`, `stopped`) once came out of order, or not at all, when
// its stdout was a pipe read slowly: exiting, it wrote what was buffered while a write held back by the full pipe was
// still in flight, which was lost. Here the pipe is full for certain: its standard output is a named pipe (64 KiB)
// that nothing reads until the process has logged everything, where a child process's pipe would be read by Node.
it('a process exiting through exitAfterLog writes every line it logged, in order, to a stdout read late', async () => {
  dir = await mkdtemp(join(tmpdir(), 'leadwire-log-flush-'));
  const fifo = join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  // A reader must exist before the writer opens; the blocking reader opened next does not wait, a writer being there.
  const probe = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY);
  const reader = openSync(fifo, constants.O_RDONLY);
  closeSync(probe);
  const fixture = spawn(process.execPath, [FIXTURE], { stdio: ['ignore', writer, 'pipe'] });
  child = fixture;
  closeSync(writer);
  const exited = new Promise<number | null>((resolve) => fixture.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    fixture.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('logged\n')) resolve();
    });
    fixture.once('exit', (code) => reject(new Error(`the fixture exited (${code}) before logging everything: ${stderr}`)));
  });
  // Read to the end: the end comes when the process has exited and closed the pipe.
  let stdout = '';
  for await (const chunk of createReadStream('', { fd: reader, encoding: 'utf8' })) stdout += chunk as string;
  expect(await exited).toBe(0);
  // Each line as its number or message; a torn line (a write cut short) as the start of its text.
  const said = stdout
    .trimEnd()
    .split('\n')
    .map((line) => {
      try {
        const { i, msg } = JSON.parse(line) as { msg: string; i?: number };
        return i ?? msg;
      } catch {
        return `torn: ${line.slice(0, 60)}`;
      }
    });
  expect(said).toEqual([...Array.from({ length: 300 }, (_, i) => i), 'last but one', 'last']);
});
