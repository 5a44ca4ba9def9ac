/**
 * PgBouncer (Debian's `pgbouncer` package) in front of the test cluster, run as a child process of the test and ended
 * by its pid. It refuses to run as root, so as root it drops to the `postgres` OS user (the one the embedded cluster
 * runs as), and its folder is made readable to it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { freePort, sleep } from './process.ts';
import { scratchDir } from './scratch.ts';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface Bouncer {
  /** The same database URL, through PgBouncer. */
  url: string;
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts PgBouncer in `mode` for the database of `databaseUrl`; `extra` lines go into its [pgbouncer] section. */
export async function startPgBouncer(databaseUrl: string, mode: 'session' | 'transaction', extra: string[] = []): Promise<Bouncer> {
  if (!existsSync(PGBOUNCER)) throw new Error(`${PGBOUNCER} is missing: apt-get install pgbouncer (README, "Tests")`);
  const target = new URL(databaseUrl);
  const db = target.pathname.slice(1);
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const dir = await scratchDir('pgbouncer');
  const port = await freePort();
  const ini = [
    '[databases]',
    `${db} = host=${target.hostname} port=${target.port} dbname=${db}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    `unix_socket_dir =`,
    'auth_type = plain',
    `auth_file = ${dir}/users.txt`,
    `pool_mode = ${mode}`,
    `logfile = ${dir}/pgbouncer.log`,
    'max_client_conn = 500',
    'default_pool_size = 100',
    ...extra,
  ].join('\n');
  await fs.writeFile(path.join(dir, 'pgbouncer.ini'), `${ini}\n`, { mode: 0o644 });
  await fs.writeFile(path.join(dir, 'users.txt'), `"${user}" "${password}"\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await fs.chown(dir, ...(await postgresIds()));
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), path.join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const log = async () => `${output}${await fs.readFile(path.join(dir, 'pgbouncer.log'), 'utf8').catch(() => '')}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${await log()}`);
    if ((await log()).includes('process up')) break;
    if (i > 250) throw new Error(`pgbouncer not up after 5 s: ${await log()}`);
    await sleep(20);
  }
  return {
    url: url.toString(),
    log,
    stop: async () => {
      if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGINT');
      await exited;
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

async function postgresIds(): Promise<[number, number]> {
  const line = (await fs.readFile('/etc/passwd', 'utf8')).split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('no postgres OS user to run pgbouncer as');
  const [, , uid, gid] = line.split(':');
  return [Number(uid), Number(gid)];
}
