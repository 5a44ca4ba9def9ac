/**
 * The package as a user gets it: sdk/dist built (or reused when it is the build of the current sources), `npm pack`
 * in sdk/ (whose prepack then finds dist up to date), the tarball installed into an empty folder, and processes run
 * there. Also reads sdk/README.md's runnable examples.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SDK_DIR } from '../../scripts/build.ts';

export const REPO = join(SDK_DIR, '..');

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const live = new Set<ChildProcess>();

/** A process with its output collected; `exited` settles when it ends. Tracked so `stopAll()` can end leftovers. */
export function start(command: string, args: readonly string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (out.stderr += c));
  const exited = new Promise<Ran>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal, ...out });
    });
  });
  return { child, out, exited };
}

/**
 * Runs a command to its end. The outcome is its exit; the kill after `timeoutMs` (default 10 minutes, far beyond
 * anything here on a slow host) only keeps a hung child from outliving the run.
 */
export async function run(
  command: string,
  args: readonly string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Ran> {
  const p = start(command, args, opts);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), opts.timeoutMs ?? 600_000);
  try {
    return await p.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Ends whatever a failed test left running. */
export function stopAll(): void {
  for (const child of live) child.kill('SIGKILL');
}

/** `node` as the test runner runs it (Node 24 from node_modules), for scripts run in the install folder. */
export const node = (args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env) =>
  run(process.execPath, args, { cwd, env });

export interface Installed {
  /** The empty folder the package was installed into (an ESM project). */
  dir: string;
  tarball: string;
  remove(): Promise<void>;
}

/**
 * Builds sdk/dist unless it is up to date (`build.ts --if-stale`: the internal router's declarations take the checker
 * tens of seconds on a slow host, so a run after an unchanged build reuses it), packs sdk/ and installs the tarball
 * offline into a new folder, with @trpc/client and @trpc/server (the internal entry's optional peers) from the
 * repository's own node_modules, as an application using that entry installs them. `packOutput` is what npm pack
 * printed, prepack's report included.
 */
export async function packAndInstall(): Promise<Installed & { packOutput: string }> {
  const root = await mkdtemp(join(tmpdir(), 'leadwire-sdk-pack-'));
  const dir = join(root, 'app');
  await mkdir(dir);
  const built = await run(process.execPath, [join(SDK_DIR, 'scripts', 'build.ts'), '--if-stale'], { cwd: SDK_DIR });
  if (built.code !== 0) throw new Error(`the SDK build failed:\n${built.stdout}\n${built.stderr}`);
  const packed = await run('npm', ['pack', '--foreground-scripts', '--pack-destination', root], { cwd: SDK_DIR });
  if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.stdout}\n${packed.stderr}`);
  const tarball = join(root, (await readdir(root)).find((f) => f.endsWith('.tgz'))!);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
  const peers = ['client', 'server'].map((p) => join(REPO, 'node_modules', '@trpc', p));
  const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball, ...peers], { cwd: dir });
  if (installed.code !== 0) throw new Error(`npm install failed:\n${installed.stdout}\n${installed.stderr}`);
  return { dir, tarball, packOutput: packed.stdout + packed.stderr, remove: () => rm(root, { recursive: true, force: true }) };
}

export interface Example {
  /** What the marker asks: `run` (a Public API key), `run internal` (an Internal key) or `receiver`. */
  kind: 'run' | 'run internal' | 'receiver';
  lang: 'js' | 'ts';
  code: string;
  /** The README line of the opening fence, for failure messages. */
  line: number;
}

const MARKER = /^<!-- example: (run|run internal|receiver) -->\n```(js|ts)\n([\s\S]*?)\n```$/gm;

/** Every code block of sdk/README.md marked runnable (see the README's contributor note). */
export function readmeExamples(readme = readFileSync(join(SDK_DIR, 'README.md'), 'utf8')): Example[] {
  return [...readme.matchAll(MARKER)].map((m) => ({
    kind: m[1] as Example['kind'],
    lang: m[2] as Example['lang'],
    code: m[3]!,
    line: readme.slice(0, m.index).split('\n').length + 1,
  }));
}

/** How many blocks carry a marker at all: a marker the pattern above does not match must fail the test, not vanish. */
export const markerCount = (readme = readFileSync(join(SDK_DIR, 'README.md'), 'utf8')) => (readme.match(/^<!-- example:/gm) ?? []).length;

const TLS_DIR = join(REPO, 'test', 'support', 'fixtures', 'tls');

/**
 * A TLS-terminating proxy in front of a plain-HTTP receiver on `port`, as a receiver runs in production (Leadwire
 * delivers to https URLs only): its certificate comes from the test CA the test workers trust. It passes method, path,
 * headers and body bytes through unchanged.
 */
export async function tlsFront(port: number): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer(
    { key: readFileSync(join(TLS_DIR, 'receiver-key.pem')), cert: readFileSync(join(TLS_DIR, 'receiver.pem')) },
    (req, res) => {
      const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}
