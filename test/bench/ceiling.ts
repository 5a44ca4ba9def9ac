import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./ceiling-server.ts', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

export interface CeilingServer {
  origin: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts ceiling-server.ts as its own process (as the real server runs) and waits for its port. */
export async function startCeiling(url: string, poolSize: number, seeds: number): Promise<CeilingServer> {
  const child = spawn(process.execPath, [SCRIPT, url, String(poolSize), String(seeds)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let errText = '';
  child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`ceiling server not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
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
        reject(new Error(`ceiling server exited with ${code}: ${errText.slice(-1000)}`));
      });
    });
    return { origin: `http://127.0.0.1:${port}`, pid: child.pid ?? 0, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
