import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopChild } from './server.ts';

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

export interface BareServer {
  origin: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts one of the bare servers (a script beside this file) as its own process, as the real server runs, and waits for its port. */
export async function startBare(script: 'ceiling-server.ts' | 'services-server.ts', args: readonly string[]): Promise<BareServer> {
  const file = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let errText = '';
  child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
  const stop = () => stopChild(child, STOP_TIMEOUT_MS);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening (\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${script} exited with ${code}: ${errText.slice(-1000)}`));
      });
    });
    return { origin: `http://127.0.0.1:${port}`, pid: child.pid ?? 0, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
