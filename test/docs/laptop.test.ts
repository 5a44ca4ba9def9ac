/**
 * The README's "A verified webhook on your laptop": its commands, read from the README (edit them there and this test
 * runs the new ones), run as a reader runs them after cloning: each in a bash of its own (a terminal), from the
 * checkout, with the reader's PATH (the system's npm and npx, node_modules/.bin not on it), against a real server
 * started by `npm start` and the receiver `listen` starts. Done means the receiver printed "verified" and answered 200.
 *
 * Substituted, as in the docs' examples test: the ports (3000 and 4000 may be taken on the test machine; PORT tells
 * the server and the receiver which to use, LEADWIRE_BASE_URL tells the command line where the server is), the
 * database (DATABASE_URL, a test database, instead of the embedded one under .data) and the config folder of
 * `leadwire login` (LEADWIRE_CONFIG_DIR). `npm ci` is checked to be the first command but not run: the suite runs after
 * it, on this checkout, and running it again would replace node_modules under the other tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { cleanEnv, freePort, ROOT } from '../support/process.ts';

const MARKER = '<!-- example: not run: test/docs/laptop.test.ts runs exactly these commands, each in a shell of its own -->';

interface Command {
  line: string;
  /** The README says it keeps running (a server, `listen`): the next command starts once it is ready. */
  background: boolean;
}

/** The commands of the README's block after MARKER, without their `# comments`. */
export function laptopCommands(readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')): Command[] {
  const lines = readme.split('\n');
  const at = lines.indexOf(MARKER);
  if (at < 0 || lines[at + 1] !== '```sh') throw new Error(`README.md has no \`\`\`sh block after ${MARKER}`);
  const end = lines.indexOf('```', at + 2);
  return lines
    .slice(at + 2, end)
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const m = /^(.*?)\s+#\s(.*)$/.exec(l);
      return { line: (m ? m[1]! : l).trim(), background: /keeps running/.test(m?.[2] ?? '') };
    });
}

class Terminal {
  out = '';
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(line: string, env: NodeJS.ProcessEnv) {
    // A process group of its own, as a terminal's job: stopping it stops what it started (npm's node, the receiver).
    this.child = spawn('bash', ['--norc', '--noprofile', '-c', line], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const add = (d: string) => (this.out += d);
    this.child.stdout!.setEncoding('utf8').on('data', add);
    this.child.stderr!.setEncoding('utf8').on('data', add);
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  async waitFor(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await ok())) {
      if (this.child.exitCode !== null) throw new Error(`exited (${this.child.exitCode}) before ${what}:\n${this.out}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms:\n${this.out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Ctrl-C as the terminal sends it (the whole group), then SIGKILL if it is still there after 10 s. */
  async stop() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const group = (signal: NodeJS.Signals) => {
      try {
        process.kill(-this.child.pid!, signal);
      } catch {
        // already gone
      }
    };
    group('SIGINT');
    const timer = setTimeout(() => group('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

let db: TestDatabase | undefined;
const terminals: Terminal[] = [];
const configDir = mkdtempSync(path.join(tmpdir(), 'leadwire-laptop-'));

afterAll(async () => {
  // The last started first: listen (and its receiver) before the server.
  for (const t of terminals.reverse()) await t.stop();
  await db?.drop();
  rmSync(configDir, { recursive: true, force: true });
});

it("the README's laptop path: at most five commands from a clone to a webhook the receiver verified", async () => {
  const commands = laptopCommands();
  expect(commands.length).toBeLessThanOrEqual(5);
  expect(commands[0]).toEqual({ line: 'npm ci', background: false });
  db = await createTestDatabase(undefined, { migrated: true });
  const serverPort = await freePort();
  // Taken just before the command that uses it: a port found free long before may meanwhile be the source port of
  // some other test's outgoing connection.
  let receiverPort = 0;
  // The reader's PATH: npm ci puts node_modules/.bin on it only inside npm scripts and npx.
  const PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((p) => !p.includes('node_modules'))
    .join(':');
  const env = (port: number) =>
    cleanEnv({
      PATH,
      PORT: String(port),
      DATABASE_URL: db!.url,
      // Only makes the owner's password hash cheap.
      PASSWORD_HASH_COST: '12',
      LEADWIRE_CONFIG_DIR: configDir,
      LEADWIRE_BASE_URL: `http://localhost:${serverPort}/api`,
    });
  const substitute = (line: string) =>
    line.replaceAll('localhost:3000', `localhost:${serverPort}`).replaceAll('localhost:4000', `localhost:${receiverPort}`);

  let listen: Terminal | undefined;
  for (const { line, background } of commands.slice(1)) {
    const started = performance.now();
    const isServer = /^npm (run )?start\b/.test(line);
    if (line.includes('localhost:4000')) receiverPort = await freePort();
    const t = new Terminal(substitute(line), env(isServer ? serverPort : receiverPort));
    terminals.push(t);
    if (!background) {
      const code = await t.exited;
      expect(code, `${line}\n${t.out}\n--- the other terminals:\n${terminals.map((o) => o.out.slice(-3000)).join('\n---\n')}`).toBe(0);
    } else if (isServer) {
      const ready = async () =>
        (await fetch(`http://127.0.0.1:${serverPort}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined))?.status ===
        200;
      await t.waitFor('server ready', ready);
    } else if (/\bleadwire listen\b.* -- /.test(line)) {
      listen = t;
      await t.waitFor('receiver started', () => /Started `.*` with LEADWIRE_WEBHOOK_SECRET set/.test(t.out));
    } else throw new Error(`${line}: the test does not know when this command is ready; teach it`);
    console.info(`${line.slice(0, 60)}: ${Math.round(performance.now() - started)} ms`);
  }
  expect(listen, 'the commands start `leadwire listen -- <receiver>`').toBeDefined();
  // The receiver's own line (docs/examples/receiver.mjs), and listen's JSON line: the receiver answered 200, which it
  // does only for a delivery whose signature it verified with the secret listen handed it. The receiver prints before
  // it answers and listen prints once the answer is back, so the two lines arrive in that order: wait for both.
  const forwarded = () =>
    listen!.out
      .split('\n')
      .slice(0, -1) // the last piece may be a line still being written
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { event: string; status: number });
  await listen!.waitFor(
    'a verified delivery, forwarded with 200',
    () =>
      /^contact\.created \S+@example\.com verified$/m.test(listen!.out) &&
      forwarded().some((f) => f.event === 'contact.created' && f.status === 200),
    20_000,
  );
  expect(listen!.out).not.toMatch(/NOT verified/);
}, 120_000);
