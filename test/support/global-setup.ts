/**
 * One PostgreSQL for the whole test run: DATABASE_URL when set (CI with a service
 * container, or a developer's own server), otherwise an embedded cluster in a
 * throwaway folder. Test files get their own databases from it (see db.ts).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../packages/db/src/embedded.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL; only used to create and drop per-test databases. */
    pgAdminUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.DATABASE_URL;
  if (external) {
    project.provide('pgAdminUrl', external);
    return async () => {};
  }

  // mkdtemp creates the folder as 0700, which the `postgres` OS user (the server's
  // user when running as root) could not traverse to reach the data dir inside.
  const root = await fs.mkdtemp('/tmp/leadwire-test-pg-');
  await fs.chmod(root, 0o755);
  // Kept to explain a failed start; the cluster's chatter never reaches the test output.
  const log: string[] = [];
  let cluster: Awaited<ReturnType<typeof startEmbeddedPostgres>>;
  try {
    cluster = await startEmbeddedPostgres({
      dataDir: path.join(root, 'data'),
      onLog: (line) => {
        log.push(line);
        if (log.length > 200) log.shift();
      },
    });
  } catch (err) {
    await fs.rm(root, { recursive: true, force: true });
    throw err;
  }
  project.provide('pgAdminUrl', cluster.url);

  return async () => {
    await cluster.stop();
    await fs.rm(root, { recursive: true, force: true });
  };
}
