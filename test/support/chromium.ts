/**
 * The one way tests and scripts get a Chromium: Debian's /usr/bin/chromium (see stack notes), headless, on a closed
 * network. A test run launches ONE browser (this file's default export is a vitest global setup) and every browser test
 * file connects to it (`sharedChromium()`), each test in contexts of its own: a context is a fresh profile (cookies,
 * storage, permissions), so files and tests stay as independent as they were with a browser each, without paying for a
 * launch per file (0.5 s idle, several seconds on a busy machine). Scripts outside vitest (benchmarks) launch their own
 * with `launchChromium()`. Tests that need a browser are skipped where it is not installed.
 */
import { existsSync } from 'node:fs';
import { type Browser, type BrowserServer, chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's shared Chromium (Playwright's protocol over a WebSocket); empty where Chromium is not installed. */
    chromiumWsEndpoint: string;
  }
}

/**
 * No background traffic, and every host name but 127.0.0.1 unresolvable, so a page can only reach the local servers of
 * the test (tests that show a page at a public name route it to the test server themselves).
 * `AutomationControlled` off: Chromium under automation sets navigator.webdriver, which the tracking and lead-capture
 * snippets obey by sending nothing; the browser stands for a visitor's (a test of that rule sets the flag back in its
 * own context, test/tracking/browser.test.ts).
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-sync',
  '--disable-background-networking',
  '--disable-component-update',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  '--disable-blink-features=AutomationControlled',
];

/** A browser of its own, for scripts outside a test run. Playwright gives it a temporary profile and removes it on close. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * The run's browser, for a test file: a connection of the file's own, whose close() closes the contexts the file opened
 * and leaves the browser to the others. Call it in beforeAll and close it in afterAll.
 */
export async function sharedChromium(): Promise<Browser> {
  const { inject } = await import('vitest');
  const endpoint = inject('chromiumWsEndpoint');
  if (!endpoint) throw new Error(`no shared Chromium: ${CHROMIUM} is not installed (guard the suite with hasChromium)`);
  return chromium.connect(endpoint);
}

/**
 * Global setup (vitest.config.ts): launches the run's Chromium and hands its address to the test files. Playwright
 * starts the browser as the leader of a process group of its own; the teardown closes it, then ends whatever of that
 * group is left (renderer or GPU helpers of a browser that did not shut down cleanly).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!hasChromium) {
    project.provide('chromiumWsEndpoint', '');
    return async () => {};
  }
  const server: BrowserServer = await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const pid = server.process().pid;
  project.provide('chromiumWsEndpoint', server.wsEndpoint());
  return async () => {
    await server.close().catch(() => server.kill());
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // The group is already gone: the browser closed cleanly.
    }
  };
}
