import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Webhook tests deliver to HTTPS receivers whose certificates come from the test CA. Node reads NODE_EXTRA_CA_CERTS
// only when a process starts, so it is set here, before vitest forks its workers: the same way an operator trusts a
// receiver's private CA.
process.env.NODE_EXTRA_CA_CERTS = join(import.meta.dirname, 'test', 'support', 'fixtures', 'tls', 'ca.pem');
// The tests spawn the server and the CLIs many times; with Node's compile cache each start after the first
// skips stripping and compiling the same modules again (a server start 1.0 s -> 0.6 s). Entries are keyed by content.
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, 'node_modules', '.cache', 'node-compile');

export default defineConfig({
  test: {
    include: ['apps/**/*.test.ts', 'packages/**/*.test.ts', 'test/**/*.test.ts', 'snippets/**/*.test.ts', 'sdk/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['test/support/global-setup.ts', 'snippets/build.ts', 'apps/console/build.ts', 'test/support/chromium.ts'],
    setupFiles: ['test/support/file-outcome.ts'],
    // Each file gets its own database, so files can run in parallel. Many files spend their time waiting on child
    // processes (servers, CLIs, PostgreSQL restarts, a browser), so one worker more than the 2 cores keeps them busy:
    // measured on 2 cores, the suite alone took 154 s with 2 workers and 128 s with 3.
    maxWorkers: 3,
    // Workers are reused across files instead of a fresh one per file (about 0.5 s each): no test mocks modules or
    // changes process-wide state, and everything a file starts it stops; the setup file still runs for every file.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
