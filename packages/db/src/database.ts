import path from 'node:path';
import { type EmbeddedPostgresHandle, runningCluster, startEmbeddedPostgres, stopOrphanedCluster } from './embedded.ts';

export interface Database {
  url: string;
  /** True when we started an embedded cluster (and so must stop it). */
  ownsCluster: boolean;
  stop(): Promise<void>;
}

/** The few pino methods the supervisor logs with. */
export interface SupervisorLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface Supervision {
  /** Restarts tried in a row after the embedded server died; 0 gives up at once. */
  restartAttempts: number;
  log: SupervisorLog;
  /** Every restart failed (or none was allowed): the process should exit non-zero for its manager to restart it. */
  onGiveUp(err: Error): void;
}

/** First wait before a restart: the dead server's backends need a moment to notice and let go of its shared memory. */
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 5_000;

/**
 * DATABASE_URL when given; otherwise the embedded cluster under `<dataDir>/postgres`, joined when another process
 * (the running server) already has it up, started otherwise. With `supervise` (the server), the cluster is started in
 * a process group of its own, so that a terminal's Ctrl-C reaches the server alone and the server stops it last, and
 * it is supervised: if it dies, it is started again on the same port (the pools reconnect by themselves), up to
 * `restartAttempts` times in a row with doubling waits, after which `onGiveUp` is called.
 *
 * A cluster left running by a server that was SIGKILLed (its owner is gone: runningCluster().orphaned) is not joined
 * by a supervising process, since nobody would restart it if it died: it is stopped cleanly and started again under
 * this one, on the same port. Processes that only pass through (the admin CLI, migrate) join it as it is.
 */
export async function openDatabase(opts: {
  databaseUrl?: string | undefined;
  dataDir: string;
  onLog?: (msg: string) => void;
  supervise?: Supervision;
}): Promise<Database> {
  if (opts.databaseUrl) return { url: opts.databaseUrl, ownsCluster: false, stop: async () => {} };
  const dataDir = path.join(path.resolve(opts.dataDir), 'postgres');
  const supervise = opts.supervise;
  const running = await runningCluster(dataDir);
  if (running && !(supervise && running.orphaned)) return { url: running.url, ownsCluster: false, stop: async () => {} };
  if (running) {
    supervise?.log.warn(
      { pid: running.pid, port: running.port },
      'embedded PostgreSQL was left running by a server that is gone; restarting it under this one',
    );
    await stopOrphanedCluster(running);
  }
  const start = (port?: number) =>
    startEmbeddedPostgres({
      dataDir,
      detached: supervise !== undefined,
      ...(port ? { port } : {}),
      ...(opts.onLog ? { onLog: opts.onLog } : {}),
    });
  // The orphan's port first, for clients that still hold its URL; any free one if that is gone meanwhile.
  let current = running ? await start(running.port).catch(() => start()) : await start();
  let stopped = false;
  let restarting: Promise<void> | undefined;
  const watch = (cluster: EmbeddedPostgresHandle): void =>
    cluster.onUnexpectedExit((exit) => {
      if (stopped || !supervise) return;
      supervise.log.error({ exit, restartAttempts: supervise.restartAttempts }, 'embedded PostgreSQL exited unexpectedly');
      restarting = restart(cluster.port, supervise).finally(() => (restarting = undefined));
    });
  const restart = async (port: number, s: Supervision): Promise<void> => {
    let last: unknown;
    for (let attempt = 1; attempt <= s.restartAttempts; attempt++) {
      await new Promise((r) => setTimeout(r, Math.min(FIRST_RESTART_DELAY_MS * 2 ** (attempt - 1), MAX_RESTART_DELAY_MS)));
      if (stopped) return;
      try {
        current = await start(port);
        // Stopped meanwhile: stop() waits for this restart, then stops what it started.
        if (stopped) return;
        watch(current);
        s.log.info({ attempt, port }, 'embedded PostgreSQL restarted');
        return;
      } catch (err) {
        last = err;
        s.log.warn({ attempt, err }, 'embedded PostgreSQL restart failed');
      }
    }
    s.onGiveUp(new Error(`Embedded PostgreSQL died and ${s.restartAttempts} restart attempt(s) failed`, { cause: last }));
  };
  watch(current);
  return {
    url: current.url,
    ownsCluster: true,
    stop: async () => {
      stopped = true;
      await restarting;
      await current.stop();
    },
  };
}
