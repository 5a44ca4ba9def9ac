import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['apps/**/*.test.ts', 'packages/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/file-outcome.ts'],
    // Each file gets its own database, so files can run in parallel; 2 cores make 2 workers the sweet spot.
    maxWorkers: 2,
    // Workers are reused across files instead of a fresh one per file (about 0.5 s each): no test mocks modules or
    // changes process-wide state, and everything a file starts it stops; the setup file still runs for every file.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
