/**
 * `leadwire listen --forward-to <url> -- <command…>`: the receiver started by listen itself, once the stream has given
 * the secret, with the secret in its environment. A receiver started before listen cannot know the secret (it is
 * printed by listen), so without this a first run needs a restart of the receiver; with it, one command does both.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import type { CliContext } from '../context.ts';

/** The environment variable the receiver reads its secret from (docs/examples/receiver.mjs, sdk/README.md). */
export const SECRET_ENV = 'LEADWIRE_WEBHOOK_SECRET';
/** How long a receiver may take to accept connections before deliveries are forwarded anyway (and reported). */
const START_TIMEOUT_MS = 15_000;
const PROBE_EVERY_MS = 50;
/** How long a stopped receiver gets to exit before it is killed. */
const STOP_GRACE_MS = 5_000;

export interface StartedReceiver {
  /** Resolves once the receiver accepts connections at the forward-to address (or gave up waiting, or exited). */
  ready: Promise<void>;
  /** Resolves with the exit code (or signal) when the receiver ends, for whatever reason. */
  exited: Promise<string>;
  /** Stops it (SIGTERM, then SIGKILL after a grace period) and waits for its exit. */
  stop(): Promise<void>;
}

/** Starts `command` with the secret in its environment; its output goes to stderr (stdout stays the JSON lines). */
export function startReceiver(ctx: CliContext, command: string[], secret: string, target: string): StartedReceiver {
  const [file, ...args] = command as [string, ...string[]];
  const child: ChildProcess = spawn(file, args, {
    cwd: ctx.cwd,
    // The receiver gets the signing secret, not the API key listen was given.
    env: { ...ctx.env, LEADWIRE_API_KEY: undefined, [SECRET_ENV]: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => ctx.stderr.write(d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => ctx.stderr.write(d.toString('utf8')));
  let gone = false;
  const exited = new Promise<string>((resolve) => {
    child.once('error', (err) => {
      gone = true;
      resolve(`could not start: ${err.message}`);
    });
    child.once('exit', (code, signal) => {
      gone = true;
      resolve(signal ? `killed by ${signal}` : `exit code ${code}`);
    });
  });
  const url = new URL(target);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const ready = (async () => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!gone && !ctx.signal.aborted && Date.now() < deadline) {
      if (await accepts(host, port)) return;
      await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
    }
  })();
  return {
    ready,
    exited,
    stop: async () => {
      if (gone) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Whether something accepts TCP connections at host:port now. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(1_000, () => done(false));
  });
}
