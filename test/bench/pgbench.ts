import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import type { CpuShare } from './cpu.ts';

const DEBIAN_PACKAGE = 'postgresql-15';
const TABLE = 'bench_pgbench_upsert';

/**
 * The reference: the simplest form of the API's work, one `insert ... on conflict do update` of a contact-like row,
 * half of them on an existing email and half on a new one, driven by pgbench over `clients` connections. It is what
 * the database alone does for the same concurrency, so the API's share of it holds across machines.
 */
const SCRIPT = `\\set existing random(0, 1)
\\if :existing
\\set n random(0, :seeds - 1)
\\else
\\set n random(:seeds, 1000000000000)
\\endif
insert into ${TABLE} (email, first_name, last_name, updated_at)
values ('p-' || :n || '@bench.example.com', 'Ada', 'Bench', now())
on conflict (email) do update set first_name = excluded.first_name, last_name = excluded.last_name, updated_at = excluded.updated_at;
`;

function sh(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, maxBuffer: 16 * 2 ** 20 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${stderr.slice(-2000)}`, { cause: err }));
      else resolve();
    });
  });
}

/** Debian's versioned binaries first (the /usr/bin one is a wrapper that wants a configured cluster), then PATH. */
function locate(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = path.join(root, v, 'bin', 'pgbench');
      if (existsSync(bin)) return bin;
    }
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const bin = path.join(dir, 'pgbench');
    if (dir && existsSync(bin)) return bin;
  }
  return null;
}

/** Finds pgbench, or installs Debian's postgresql-15 (which ships it) with apt-get, saying so. */
export async function findPgbench(log: (msg: string) => void): Promise<string> {
  const found = locate();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(`pgbench not found; install it first, e.g. sudo apt-get install -y ${DEBIAN_PACKAGE}`);
  }
  // The benchmark needs only the binary; RUNLEVEL=1 asks invoke-rc.d not to start the package's own cluster.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', RUNLEVEL: '1' };
  log(`pgbench not found: running apt-get install -y --no-install-recommends ${DEBIAN_PACKAGE} ...`);
  try {
    await sh('apt-get', ['install', '-y', '--no-install-recommends', DEBIAN_PACKAGE], env);
  } catch {
    log('apt-get install failed; running apt-get update and trying once more ...');
    await sh('apt-get', ['update'], env);
    await sh('apt-get', ['install', '-y', '--no-install-recommends', DEBIAN_PACKAGE], env);
  }
  const installed = locate();
  if (!installed) throw new Error(`${DEBIAN_PACKAGE} installed but no pgbench binary found`);
  log(`installed ${installed}`);
  return installed;
}

export interface PgbenchResult {
  binary: string;
  version: string;
  clients: number;
  seconds: number;
  tps: number;
  latencyAvgMs: number | null;
  failed: number;
  cpu: CpuShare | null;
}

function run(binary: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`pgbench exited with ${code}:\n${out.slice(-2000)}`))));
  });
}

/**
 * A warm-up run (not measured) and a measured run of `script` at `clients` clients (prepared statements, no vacuum),
 * with the CPU `meter` saw during the measured one, its transactions per second, and a reader of its other figures.
 */
export async function measurePgbench(o: {
  binary: string;
  env: NodeJS.ProcessEnv;
  script: string;
  defines: string[];
  clients: number;
  warmupSeconds: number;
  seconds: number;
  meter: () => () => CpuShare | null;
}): Promise<{ tps: number; cpu: CpuShare | null; number: (re: RegExp) => number | null }> {
  const threads = String(Math.max(1, Math.min(o.clients, os.cpus().length)));
  const args = (seconds: number) => [
    '-n',
    '-M',
    'prepared',
    '-c',
    String(o.clients),
    '-j',
    threads,
    '-T',
    String(seconds),
    ...o.defines,
    '-f',
    o.script,
  ];
  if (o.warmupSeconds > 0) await run(o.binary, args(o.warmupSeconds), o.env);
  const stop = o.meter();
  const out = await run(o.binary, args(o.seconds), o.env);
  const cpu = stop();
  const number = (re: RegExp) => {
    const m = out.match(re);
    return m ? Number(m[1]) : null;
  };
  const tps = number(/tps = ([\d.]+) \(without initial connection time\)/) ?? number(/tps = ([\d.]+)/);
  if (tps === null) throw new Error(`could not read tps from pgbench:\n${out.slice(-2000)}`);
  return { tps, cpu, number };
}

/** The environment pgbench (libpq) connects with to the database at `url`. */
export function libpqEnv(url: string): NodeJS.ProcessEnv {
  const u = new URL(url);
  return {
    ...process.env,
    PGHOST: u.hostname,
    PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username),
    PGPASSWORD: decodeURIComponent(u.password),
    PGDATABASE: decodeURIComponent(u.pathname.slice(1)),
  };
}

/** Creates and seeds the reference table, runs a warm-up and a measured pgbench run, and drops the table. */
export async function runPgbench(o: {
  binary: string;
  url: string;
  pool: pg.Pool;
  clients: number;
  warmupSeconds: number;
  seconds: number;
  seeds: number;
  meter: () => () => CpuShare | null;
}): Promise<PgbenchResult> {
  const env = libpqEnv(o.url);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'leadwire-pgbench-'));
  const script = path.join(dir, 'upsert.sql');
  await fs.writeFile(script, SCRIPT);
  await o.pool.query(`drop table if exists ${TABLE}`);
  await o.pool.query(
    `create table ${TABLE} (email text primary key, first_name text not null, last_name text not null, updated_at timestamptz not null)`,
  );
  try {
    await o.pool.query(
      `insert into ${TABLE} select 'p-' || g || '@bench.example.com', 'Seed', 'Row', now() from generate_series(0, $1::int - 1) g`,
      [o.seeds],
    );
    await o.pool.query(`analyze ${TABLE}`);
    const version = (await run(o.binary, ['--version'], env)).trim();
    const m = await measurePgbench({ ...o, env, script, defines: ['-D', `seeds=${o.seeds}`] });
    return {
      binary: o.binary,
      version,
      clients: o.clients,
      seconds: o.seconds,
      tps: m.tps,
      latencyAvgMs: m.number(/latency average = ([\d.]+) ms/),
      failed: m.number(/number of failed transactions: (\d+)/) ?? 0,
      cpu: m.cpu,
    };
  } finally {
    await o.pool.query(`drop table if exists ${TABLE}`);
    await fs.rm(dir, { recursive: true, force: true });
  }
}
