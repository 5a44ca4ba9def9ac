import { spawn } from 'node:child_process';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestApp } from '../../../test/support/app.ts';
import type { CliContext } from '../../src/cli/context.ts';
import { run } from '../../src/cli/main.ts';

export const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');
export const MAIN = join(REPO_ROOT, 'sdk', 'src', 'cli', 'main.ts');

/** A temporary folder for config and input files; `cleanup()` removes it. */
export async function tempDir(prefix = 'leadwire-cli-'): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Runs `leadwire <argv>` in-process with captured output; ctx fields may be replaced. */
export async function cli(
  argv: string[],
  over: Partial<CliContext> & { configDir: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    env: {},
    cwd: over.configDir,
    isTTY: false,
    fetch: globalThis.fetch,
    signal: new AbortController().signal,
    ...over,
  });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** Runs the CLI as a real process (`node sdk/src/cli/main.ts ...`), optionally feeding standard input. */
export function spawnCli(
  argv: string[],
  opts: { configDir: string; env?: Record<string, string>; input?: string; cwd?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...argv], {
      cwd: opts.cwd ?? REPO_ROOT,
      // Only what the CLI reads: the developer's own LEADWIRE_* variables and config must not leak into a test.
      env: { PATH: process.env.PATH ?? '', HOME: opts.configDir, LEADWIRE_CONFIG_DIR: opts.configDir, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

export const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * For import tests: each call makes a new organization and writes `content` to a new file in `dir`; it returns the
 * keys, the file's path, the arguments that point the CLI at the server with the Public key, and the org's contacts.
 */
/** A contact as the import tests read it back from the database. */
export interface ContactRow {
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  job_title: string | null;
  tags: string[];
  custom: Record<string, unknown>;
  source: string;
}

export function importSetup(t: TestApp, dir: string) {
  let n = 0;
  return async (name: string, content: string | Buffer) => {
    const org = await t.newOrg();
    const path = join(dir, `${++n}-${name}`);
    await writeFile(path, content);
    const base = ['--api-key', org.publicKey, '--base-url', `${t.origin}/api`];
    const contacts = () =>
      t.sql<ContactRow>(
        'select email, first_name, last_name, job_title, tags, custom, source from contacts where organization_id = ? order by email',
        [org.orgId],
      );
    return { ...org, path, base, contacts, configDir: dir };
  };
}
