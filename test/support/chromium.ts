/**
 * The one way tests and scripts get a Chromium: Debian's (see stack notes), headless, on a closed network. A test run
 * launches at most ONE browser (this file's default export is a vitest global setup) and every browser test file
 * connects to it (`sharedChromium()`), each test in contexts of its own: a context is a fresh profile (cookies, storage,
 * permissions), so files and tests stay as independent as they were with a browser each, without paying for a launch
 * per file (0.5 s idle, several seconds on a busy machine). Scripts outside vitest (benchmarks) launch their own with
 * `launchChromium()`. Tests that need a browser are skipped where none is installed.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserServer, chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';

/** The whole browser, as a visitor runs it: what the benchmarks measure. */
export const CHROMIUM = '/usr/bin/chromium';
/**
 * The tests' browser: Debian's `chromium-headless-shell`, Chromium's own headless build without the desktop browser
 * around it (the build Playwright's headless runs use by default). The same engine renders the same pages; measured
 * on the console files, it took half the CPU of the whole browser (renderers 51 -> 26 s, browser process 24 -> 9 s).
 * Where only the whole browser is installed, the tests use it.
 */
export const TEST_CHROMIUM = ['/usr/bin/chromium-headless-shell', CHROMIUM].find((path) => existsSync(path));
export const hasChromium = TEST_CHROMIUM !== undefined;

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * Where a test file asks for the run's shared Chromium: a local address that answers with its Playwright endpoint,
     * launching it on the first ask. Empty where Chromium is not installed.
     */
    chromiumLauncher: string;
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

/**
 * The whole browser of its own, for scripts outside a test run (the benchmarks measure what a visitor runs). Playwright
 * gives it a temporary profile and removes it on close.
 */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is not installed: the benchmarks drive Debian's chromium (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * The run's browser, for a test file: a connection of the file's own, whose close() closes the contexts the file opened
 * and leaves the browser to the others. Call it in beforeAll and close it in afterAll.
 */
export async function sharedChromium(): Promise<Browser> {
  const { inject } = await import('vitest');
  const launcher = inject('chromiumLauncher');
  if (!launcher)
    throw new Error('no shared Chromium: neither chromium-headless-shell nor chromium is installed (guard the suite with hasChromium)');
  const res = await fetch(launcher, { method: 'POST' });
  const answer = await res.text();
  if (!res.ok) throw new Error(`the run's Chromium did not start: ${answer}`);
  return chromium.connect(answer);
}

/**
 * Global setup (vitest.config.ts): serves the run's Chromium to the test files, launched when the first of them asks
 * (`sharedChromium()`), so that a run without a browser file (`npm run test:quick`, most single files) starts none. A
 * failed launch is every later ask's answer too. Playwright starts the browser as the leader of a process group of its
 * own; the teardown closes it, then ends whatever of that group is left (renderer or GPU helpers of a browser that did
 * not shut down cleanly).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!hasChromium) {
    project.provide('chromiumLauncher', '');
    return async () => {};
  }
  let launched: Promise<BrowserServer> | undefined;
  const launcher = http.createServer((_req, res) => {
    launched ??= chromium.launchServer({ executablePath: TEST_CHROMIUM, args: CHROMIUM_ARGS });
    launched.then(
      (server) => res.end(server.wsEndpoint()),
      (err: unknown) => res.writeHead(500).end(err instanceof Error ? err.message : String(err)),
    );
  });
  await new Promise<void>((resolve) => launcher.listen(0, '127.0.0.1', resolve));
  project.provide('chromiumLauncher', `http://127.0.0.1:${(launcher.address() as AddressInfo).port}/`);
  return async () => {
    await new Promise((resolve) => launcher.close(resolve));
    const server = await launched?.catch(() => undefined);
    if (!server) return;
    const pid = server.process().pid;
    await server.close().catch(() => server.kill());
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // The group is already gone: the browser closed cleanly.
    }
  };
}

/** A public origin served by publicOrigin(): the proxy for browser contexts, and its close. */
export interface PublicOrigin {
  /** What `browser.newContext({ proxy })` takes. */
  proxy: { server: string; bypass: string };
  close(): Promise<void>;
}

/**
 * A public origin (`http://forms.leadwire.test`) answered by a local test server, for the pages a visitor opens there
 * (hosted forms, mailed links): a forward proxy for browser contexts, `browser.newContext({ proxy: origin.proxy })`.
 * The page sees the public origin and real redirects (a form's POST answered 303), which Playwright's request routing
 * cannot give a navigation: a POST fulfilled with a redirect ended on Chromium's error page (the headless shell never
 * left it). Requests to any other origin are refused; loopback addresses bypass the proxy.
 */
export async function publicOrigin(origin: string, local: string): Promise<PublicOrigin> {
  const target = new URL(local);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://invalid');
    if (url.origin !== origin) return void res.writeHead(502).end();
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: url.pathname + url.search,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    proxy: { server: `http://127.0.0.1:${port}`, bypass: '127.0.0.1' },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
