import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waiter } from '../../../test/support/waiter.ts';
import type { CliContext, Command } from '../../src/cli/context.ts';

export interface RunningCommand {
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first match of `re` in stderr, waiting for it. */
  stderrMatch(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** The JSON lines on stdout, once there are at least `n`. */
  stdoutLines(n: number, timeoutMs?: number): Promise<Record<string, unknown>[]>;
  /** Aborts (Ctrl-C) and returns the exit code. */
  stop(): Promise<number>;
  done: Promise<number>;
}

/** Runs a command in-process with its own empty config folder, the real fetch and an abortable signal. */
export async function startCommand(command: Command, argv: string[], env: Record<string, string> = {}): Promise<RunningCommand> {
  const configDir = await mkdtemp(join(tmpdir(), 'leadwire-listen-'));
  const abort = new AbortController();
  let out = '';
  let err = '';
  const w = waiter();
  const ctx: CliContext = {
    stdout: { write: (s: string) => ((out += s), w.wake()) },
    stderr: { write: (s: string) => ((err += s), w.wake()) },
    env,
    cwd: configDir,
    configDir,
    isTTY: false,
    fetch: globalThis.fetch,
    signal: abort.signal,
  };
  const done = command.run(ctx, argv).finally(() => rm(configDir, { recursive: true, force: true }));
  // A command that fails early must fail the wait too, not leave it hanging until its time-out.
  let failed: Error | undefined;
  done.catch((e: unknown) => {
    failed = e instanceof Error ? e : new Error(String(e));
    w.wake();
  });
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    stdout: () => out,
    stderr: () => err,
    stderrMatch: async (re, timeoutMs = 10_000) => {
      await w.until(
        () => re.test(err) || failed !== undefined,
        () => `stderr never matched ${re}:\n${err}`,
        timeoutMs,
      );
      if (failed !== undefined) throw failed;
      return re.exec(err)!;
    },
    stdoutLines: async (n, timeoutMs = 10_000) => {
      await w.until(
        () => lines().length >= n || failed !== undefined,
        () => `fewer than ${n} lines on stdout:\n${out}\nstderr:\n${err}`,
        timeoutMs,
      );
      if (failed !== undefined) throw failed;
      return lines();
    },
    stop: async () => {
      abort.abort();
      return done;
    },
    done,
  };
}

export interface LocalRequest {
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
}

/** A plain-HTTP receiver on loopback, as a developer runs one: records raw bytes; answers `status`. */
export async function localReceiver(status = 200) {
  const requests: LocalRequest[] = [];
  const w = waiter();
  let answer = status;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ url: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) });
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      w.wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    answer: (s: number) => void (answer = s),
    waitFor: async (n: number, timeoutMs = 10_000) => {
      await w.until(
        () => requests.length >= n,
        () => `receiver got ${requests.length} of ${n} requests`,
        timeoutMs,
      );
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
