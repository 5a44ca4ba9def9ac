import path from 'node:path';
import { runningClusterUrl, startEmbeddedPostgres } from './embedded.ts';

export interface Database {
  url: string;
  /** True when we started an embedded cluster (and so must stop it). */
  ownsCluster: boolean;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when given; otherwise the embedded cluster under `<dataDir>/postgres`, joined when another process
 * (the running server) already has it up, started otherwise.
 */
export async function openDatabase(opts: {
  databaseUrl?: string | undefined;
  dataDir: string;
  onLog?: (msg: string) => void;
}): Promise<Database> {
  if (opts.databaseUrl) return { url: opts.databaseUrl, ownsCluster: false, stop: async () => {} };
  const dataDir = path.join(path.resolve(opts.dataDir), 'postgres');
  const running = await runningClusterUrl(dataDir);
  if (running) return { url: running, ownsCluster: false, stop: async () => {} };
  const cluster = await startEmbeddedPostgres({ dataDir, ...(opts.onLog ? { onLog: opts.onLog } : {}) });
  return { url: cluster.url, ownsCluster: true, stop: () => cluster.stop() };
}
