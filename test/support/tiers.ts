import { globSync } from 'node:fs';
import { matchesGlob } from 'node:path';

/**
 * The test files in three tiers (vitest.config.ts runs them in this order). `processes` spawns things: servers, CLIs,
 * PostgreSQL clusters it stops and restarts, a child vitest, Chromium. `pure` touches no database. `server` is the rest:
 * an app in the test process on the file's own database. `npm run test:quick` runs pure and server.
 *
 * The lists are paths, so a reader sees where a file runs; test/architecture/tiers.test.ts holds each file to its
 * tier's rule (a file that spawns is in `processes`, a `pure` file opens no database), so a new file cannot hide in the
 * wrong tier.
 */

/** Every test file of the repository. */
export const ALL_TESTS = ['apps/**/*.test.ts', 'packages/**/*.test.ts', 'test/**/*.test.ts', 'snippets/**/*.test.ts', 'sdk/**/*.test.ts'];

export const PROCESS_TESTS = [
  'test/process/**/*.test.ts',
  'test/console/**/*.test.ts',
  // Chromium: the tracking and capture snippets, the public pages, the SDK in a page, the API reference render check.
  'test/{capture,tracking}/browser.test.ts',
  'test/{forms,mail}/pages-browser.test.ts',
  'test/forms/consent-browser.test.ts',
  'sdk/test/browser.test.ts',
  'test/api/openapi.test.ts',
  // Spawned servers: a key's sign-in across processes, a crash between write and answer.
  'test/api/auth.test.ts',
  'test/api/idempotency-crash.test.ts',
  'test/webhooks/delivery/worker-kill.test.ts',
  // PostgreSQL clusters of their own, stopped and restarted under the app.
  'test/api/db-outage.test.ts',
  'test/api/db-stall.test.ts',
  'test/webhooks/delivery/pg-restart.test.ts',
  'packages/db/src/embedded.test.ts',
  // A primary and a streaming standby of its own (read replicas).
  'test/replicas/standby.test.ts',
  // The README's and the docs' commands, run as a reader runs them.
  'test/docs/examples.test.ts',
  'test/docs/laptop.test.ts',
  // A child vitest run of failing fixtures; processes left behind by a run.
  'test/support/{keep-on-failure,strays}.test.ts',
  // The SDK's command line, spawned, and its package packed and installed.
  'sdk/test/{cli,import,import-resume,events-tail,export,listen,pack}.test.ts',
  // The suite benchmark's process meter and per-file costs, over processes they start.
  'test/bench/process-meter.test.ts',
  'test/support/file-cpu.test.ts',
];

export const PURE_TESTS = [
  'apps/**/*.test.ts',
  'packages/**/*.test.ts',
  'snippets/**/*.test.ts',
  'sdk/test/{contract,size}.test.ts',
  'test/architecture/**/*.test.ts',
  'test/bench/**/*.test.ts',
  'test/api/openapi-{contract,examples,request-id}.test.ts',
  'test/contract/**/*.test.ts',
  'test/replicas/routes.test.ts',
  'test/webhooks/transport/{address,resolver,signing}.test.ts',
  'test/support/{ports,sequencer}.test.ts',
];

/** Files under a PURE_TESTS folder that do open a database. */
export const PURE_EXCEPT = ['packages/core/src/accounts/service.test.ts', 'packages/db/src/embedded.test.ts'];

/** The tiers in the order a run hands them out (test/support/sequencer.ts). */
export const TIERS = ['processes', 'pure', 'server'] as const;
export type Tier = (typeof TIERS)[number];

/** The tiers a comma list names (`LEADWIRE_TEST_TIERS`), in run order; all of them when it is empty or unset. */
export function selectTiers(list: string | undefined): Tier[] {
  const named = (list ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (named.length === 0) return [...TIERS];
  const unknown = named.filter((t) => !(TIERS as readonly string[]).includes(t));
  if (unknown.length > 0) throw new Error(`LEADWIRE_TEST_TIERS names no tier ${unknown.join(', ')}: the tiers are ${TIERS.join(', ')}`);
  return TIERS.filter((t) => named.includes(t));
}

const matches = (file: string, globs: readonly string[]) => globs.some((g) => matchesGlob(file, g));

/** The tier of a test file (a path relative to the repository root). */
export function tierOf(file: string): Tier {
  if (matches(file, PROCESS_TESTS)) return 'processes';
  if (matches(file, PURE_TESTS) && !matches(file, PURE_EXCEPT)) return 'pure';
  return 'server';
}

/** Every test file under `root`, by tier, as paths relative to it. */
export function testTiers(root: string): Record<Tier, string[]> {
  const tiers: Record<Tier, string[]> = { processes: [], pure: [], server: [] };
  for (const file of globSync(ALL_TESTS, { cwd: root, exclude: (f) => f.includes('node_modules') }).sort()) tiers[tierOf(file)].push(file);
  return tiers;
}
