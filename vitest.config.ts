import { enableCompileCache } from 'node:module';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { SCRATCH } from './test/support/scratch.ts';
import { RunSequencer } from './test/support/sequencer.ts';
import { selectTiers, testTiers } from './test/support/tiers.ts';

// Webhook tests deliver to HTTPS receivers whose certificates come from the test CA. Node reads NODE_EXTRA_CA_CERTS
// only when a process starts, so it is set here, before vitest forks its workers: the same way an operator trusts a
// receiver's private CA.
process.env.NODE_EXTRA_CA_CERTS = join(import.meta.dirname, 'test', 'support', 'fixtures', 'tls', 'ca.pem');
// The tests spawn the server and the CLIs many times; with Node's compile cache each start after the first
// skips stripping and compiling the same modules again (a server start 1.0 s -> 0.6 s). Entries are keyed by content.
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, 'node_modules', '.cache', 'node-compile');
// This process too (the variable is read at a process's start, so it is enabled here): the global setup loads the
// server's composition and writes what it compiled at once (global-setup.ts), and so do the test helpers before they
// spawn, so that on a fresh clone the workers and spawned processes find the modules compiled instead of each
// compiling them again until some process exits and writes its entries.
enableCompileCache(process.env.NODE_COMPILE_CACHE);

// What the tests and what they spawn put in the temporary folder (apps' DATA_DIR, the SDK's packed install, Chromium's
// profile) goes to the scratch folder too, unless TMPDIR says otherwise (test/support/scratch.ts says why).
process.env.TMPDIR ??= SCRATCH;

const tiers = testTiers(import.meta.dirname);
// `LEADWIRE_TEST_TIERS=pure,server` (`npm run test:quick`) runs those tiers only; every tier by default.
const selected = selectTiers(process.env.LEADWIRE_TEST_TIERS);

export default defineConfig({
  test: {
    // One embedded cluster and one migrated template per run; the run's one Chromium, launched when the first browser
    // file asks for it (test/support/chromium.ts), so `test:quick` and most single files start none.
    globalSetup: ['test/support/global-setup.ts', 'snippets/build.ts', 'apps/console/build.ts', 'test/support/chromium.ts'],
    // Three tiers (test/support/tiers.ts) in one vitest project: vitest starts workers per project and never hands a
    // project's worker another's files, so three projects started nine workers, each loading the server's modules
    // again (vitest alone 162-169 s and 306-317 s of CPU with them, 151-155 s and 284-292 s without; alternated). The
    // sequencer hands out `processes` first (the longest files, mostly waiting on what they spawned), then `pure`, then
    // `server`, each longest first, so the many short files fill the workers at the end instead of a long one forming
    // the tail.
    include: selected.flatMap((tier) => tiers[tier]),
    sequence: { sequencer: RunSequencer },
    setupFiles: ['test/support/file-outcome.ts'],
    // Each file gets its own database, so files can run in parallel. Many files spend their time waiting on child
    // processes (servers, CLIs, PostgreSQL restarts, a browser), so one worker more than the 2 cores keeps them busy:
    // measured on 2 cores, the suite alone took 154 s with 2 workers and 128 s with 3.
    maxWorkers: 3,
    // Workers are reused across files instead of a fresh one per file (about 0.5 s each): no test mocks modules, the one
    // process-wide setting tests change (the password hashing cost) is set again by every app's start and by every test
    // about it, and everything a file starts it stops; the setup file still runs for every file.
    isolate: false,
    // Test files and what they import load through Node's own loader, which strips types as `npm start` does, instead
    // of vite's module runner: the tests run the code as production runs it (a construct type stripping refuses fails
    // here too), and a run on a fresh clone skips transforming some 2,000 files (the main process's CPU 19 -> 11 s, the
    // run 3-9 s shorter). Nothing here needs the runner: no test mocks a module or uses vite-only imports.
    experimental: { viteModuleRunner: false, nodeLoader: false },
    // Sized for a host three times slower than this one under the whole suite (a time-out only ends a test that is
    // already failing: outcomes wait on events, never on these).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // `expect.poll` waits for a positive signal (a browser's table redrawn, a row written); its 1 s default would fail a
    // healthy run on a slow host. Like the time-outs above, it only ends a test that is already failing.
    expect: { poll: { timeout: 30_000 } },
  },
});
