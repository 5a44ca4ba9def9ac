/**
 * Every shell example of README.md and docs/*.md runs as written, top to bottom, in one organization, against a real
 * started server: README first, then the docs in the README's reading order, in ONE bash session (as a reader's
 * terminal: variables, functions and background receivers carry over). Each step must exit 0, every curl in it must
 * succeed, the last one with the status the docs show (200 for a bare JSON answer, 2xx when none is shown), and each
 * `"key":value` shown in full must be in the answer. Plain lines shown under a command must appear in its output.
 * Steps that only read (no write, nothing started) are asked again for up to 10 s, as workers and deliveries land a
 * moment later. See docs/testing.md, "The docs' examples", for what is substituted.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { cleanEnv, freePort, ROOT, type ServerProcess, startServer } from '../support/process.ts';
import { expectation, linePattern, literals, readingOrder, type Step, shellSteps } from './markdown.ts';

/** Shown values that depend on the outside world, not on the server: left unchecked here, with the reason. */
const UNCHECKED: Record<string, string> = {
  // hooks.zapier.com must resolve in public DNS for the hook to be enabled; the test machine has no internet.
  '"enabled":true': 'docs/automation.md',
  '"disabledReason":null': 'docs/automation.md',
};

const WRAPPER = `
set -E -o pipefail
trap 'LW_FAIL=$((LW_FAIL+1))' ERR
# The session's folder links the checkout's node_modules: an example that installs would replace the real one.
# So does one that starts the server, runs the tests or a benchmark: only the admin commands and migrations run here.
npm() {
  case "$*" in "run --silent admin "*|"run admin "*|"run migrate"*) command npm "$@";;
    *) echo "the examples test runs no 'npm $*': mark its block <!-- example: not run: <why> -->" >&2; return 1;; esac
}
# Records each call's status and body beside printing the body, so the test can compare them with the docs.
curl() {
  local n; n=$(( $(cat "$LW_DIR/n") + 1 )); echo "$n" > "$LW_DIR/n"
  printf '%s\\n' "$*" > "$LW_DIR/$n.args"
  command curl --max-time 10 "$@" -o "$LW_DIR/$n.body" -w '%{http_code}' > "$LW_DIR/$n.status"
  local rc=$?; cat "$LW_DIR/$n.body"; return $rc
}
`;

interface Ran {
  failures: number;
  out: string;
  calls: { args: string; status: number; body: string }[];
}

class Session {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'leadwire-docs-'));
  /** Where the curl wrapper records each call. */
  private readonly calls = path.join(this.dir, '.calls');
  private readonly bash: ChildProcess;
  private out = '';
  private steps = 0;

  constructor(env: NodeJS.ProcessEnv) {
    // The examples run from a checkout: the session's folder shows the repository's files, and the logs the examples
    // write stay in it.
    for (const entry of readdirSync(ROOT)) {
      if (!['.git', '.data'].includes(entry)) symlinkSync(path.join(ROOT, entry), path.join(this.dir, entry));
    }
    mkdirSync(this.calls);
    writeFileSync(path.join(this.calls, 'n'), '0');
    // A process group of its own, so that stopping it stops the receivers the examples leave in the background.
    const opts = { cwd: this.dir, env: { ...env, LW_DIR: this.calls }, stdio: 'pipe' as const, detached: true };
    this.bash = spawn('bash', ['--norc', '--noprofile'], opts);
    this.bash.stdout!.setEncoding('utf8').on('data', (d: string) => (this.out += d));
    this.bash.stderr!.setEncoding('utf8').on('data', (d: string) => (this.out += d));
    this.bash.stdin!.write(WRAPPER);
  }

  /** Runs one step in the session and collects what it printed and the curl calls it made. */
  async run(code: string): Promise<Ran> {
    const n = ++this.steps;
    const before = Number(readFileSync(path.join(this.calls, 'n'), 'utf8'));
    writeFileSync(path.join(this.dir, `.step-${n}.sh`), `${code}\n`);
    const start = this.out.length;
    const done = `__LW_DONE_${n}__`;
    this.bash.stdin!.write(`LW_FAIL=0; source ./.step-${n}.sh; echo; echo "${done} $LW_FAIL"\n`);
    const deadline = Date.now() + 20_000;
    const finished = new RegExp(`${done} (\\d+)`);
    let m: RegExpExecArray | null;
    while (!(m = finished.exec(this.out.slice(start)))) {
      if (Date.now() > deadline) throw new Error(`step did not finish within 20 s; output:\n${this.out.slice(start)}`);
      if (this.bash.exitCode !== null) throw new Error(`the shell exited (${this.bash.exitCode}); output:\n${this.out.slice(start)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const after = Number(readFileSync(path.join(this.calls, 'n'), 'utf8'));
    const calls = [];
    for (let i = before + 1; i <= after; i++) {
      const read = (ext: string) => readFileSync(path.join(this.calls, `${i}.${ext}`), 'utf8');
      calls.push({ args: read('args').trim(), status: Number(read('status')), body: read('body') });
    }
    return { failures: Number(m[1]), out: this.out.slice(start, start + m.index), calls };
  }

  stop() {
    // The session's process group: bash and whatever the examples left running in the background.
    try {
      process.kill(-this.bash.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** What the test substitutes, as docs/testing.md says: the server's and receivers' ports, and the values printed above. */
function substitute(code: string, ports: Record<string, number>, printed: Map<string, string>): string {
  let out = code;
  for (const [port, actual] of Object.entries(ports)) {
    out = out.replaceAll(`localhost:${port}`, `localhost:${actual}`).replaceAll(`PORT=${port}`, `PORT=${actual}`);
  }
  const placeholder = /^((?:export )?[A-Z_]+=)\S*\.\.\.(\s+# the (\w+) printed (?:above|by \w+).*)$/gm;
  return out.replace(placeholder, (line, assign: string, rest: string, field: string) => {
    const value = printed.get(field);
    if (!value) throw new Error(`"${line}": nothing printed ${field} before`);
    return `${assign}${value}${rest}`;
  });
}

const jsonObject = (text: string): Record<string, unknown> => {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
};

/** A step that writes nothing and starts nothing may be run again. */
const readOnly = (code: string) =>
  !/\s(-d|--data\S*|-X\s*(POST|PUT|PATCH|DELETE))\s|&\s*(\w+=\$!)?\s*$|\badmin\b|\bkill\b|\btrigger\b/m.test(code);

function check(step: Step, ran: Ran): string[] {
  const problems: string[] = [];
  const { status, json, lines } = expectation(step.shown);
  if (ran.failures) problems.push(`${ran.failures} command(s) failed`);
  ran.calls.forEach((call, i) => {
    const last = i === ran.calls.length - 1;
    const ok = last && status !== null ? call.status === status : call.status >= 200 && call.status < 300;
    const shown = last && status ? status : '2xx';
    if (!ok) problems.push(`curl ${call.args}\n  answered ${call.status} ${call.body.slice(0, 300)}; the docs show ${shown}`);
  });
  const answer = ran.calls.at(-1)?.body ?? ran.out;
  for (const literal of json ? literals(json) : []) {
    if (UNCHECKED[literal] && step.at.startsWith(UNCHECKED[literal])) continue;
    if (!answer.includes(literal)) problems.push(`the answer lacks ${literal}: ${answer.slice(0, 400)}`);
  }
  for (const line of lines) {
    if (!ran.out.split('\n').some((l) => linePattern(line).test(l))) problems.push(`no output line matches "${line}"`);
  }
  return problems;
}

describe("the README's and docs' shell examples, top to bottom in one organization", () => {
  let db: TestDatabase;
  let server: ServerProcess;
  let session: Session;
  const ports: Record<string, number> = {};

  beforeAll(async () => {
    // The examples are curl and bash, as a reader runs them: without them this test fails saying so, never skips.
    for (const tool of ['curl', 'bash']) {
      if (spawnSync(tool, ['--version']).status !== 0) throw new Error(`the docs' examples need ${tool} on PATH (apt-get install ${tool})`);
    }
    db = await createTestDatabase(undefined, { migrated: true });
    // As docs/webhooks.md starts it for a local HTTPS receiver; PASSWORD_HASH_COST only makes the owner's hash cheap.
    const env = {
      DATABASE_URL: db.url,
      PASSWORD_HASH_COST: '12',
      WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true',
      NODE_EXTRA_CA_CERTS: path.join(ROOT, 'test/support/fixtures/tls/ca.pem'),
    };
    server = await startServer(env);
    await server.waitReady();
    Object.assign(ports, { 3000: server.port, 4000: await freePort(), 4001: await freePort() });
    const bin = path.join(ROOT, 'node_modules', '.bin');
    session = new Session(cleanEnv({ ...env, PATH: `${bin}:${process.env.PATH ?? ''}` }));
  }, 60_000);

  afterAll(async () => {
    session?.stop();
    await server?.stop();
    await db?.drop();
  });

  it('each step exits 0 and answers what the docs show', async () => {
    const steps = readingOrder().flatMap(shellSteps);
    expect(steps.length).toBeGreaterThan(10);
    const printed = new Map<string, string>();
    for (const step of steps) {
      const code = substitute(step.code, ports, printed);
      const deadline = Date.now() + (readOnly(code) ? 10_000 : 0);
      let problems: string[];
      let ran: Ran;
      do {
        ran = await session.run(code);
        problems = check({ ...step, shown: step.shown.map((l) => substitute(l, ports, printed)) }, ran);
      } while (problems.length && Date.now() < deadline && (await new Promise((r) => setTimeout(r, 100, true))));
      expect(problems, `${step.at}\n${step.code}\n---\n${ran.out.slice(-2000)}`).toEqual([]);
      // What a reader copies from: the fields of the JSON objects the step printed (bootstrap's keys and ids).
      for (const line of ran.out.split('\n')) {
        const parsed = line.startsWith('{') ? jsonObject(line) : {};
        for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') printed.set(k, v);
      }
    }
  }, 90_000);
});
