/**
 * `npm run bench:console`: the console's weight and its time to first screen, on this machine, in one run.
 *
 * Builds the bundle (apps/console/build.ts) and prints each file raw and gzipped against the budget. Then starts the
 * real server on a fresh embedded PostgreSQL, signs up an owner, and drives the system Chromium (the tests' own, on a
 * closed network) over N runs each of:
 *   - the reference: GET /healthz in a fresh browser context, until the page has loaded (the floor any page of this
 *     server and browser pays: a connection, a request, a render);
 *   - cold: /app in a fresh context (nothing cached) until the sign-in heading is visible, with the server's and
 *     PostgreSQL's CPU per first screen (and per reference load, measured alike);
 *   - warm: /app again in one context whose assets are cached (served immutable), until the sign-in heading is visible;
 *   - signed in: from pressing Sign in (email and password filled) until the overview's charts are drawn; beside it
 *     the sign-in call alone (POST /api/accounts/sign-in from the bench), most of which is the password hash.
 * For each: median and p95, the ratio to the reference's median, requests (and how many the browser's cache answered) and
 * bytes received (headers and encoded bodies). Last line: `BENCH_CONSOLE_RESULT {json}`. It reports; it never fails on timings.
 *
 * Settings (environment): BENCH_CONSOLE_RUNS (20).
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { buildConsole } from '../../apps/console/build.ts';
import { launchChromium } from '../support/chromium.ts';
import { type ConsoleFigures, formatConsole, type Stats, stats, type Traffic } from './console-report.ts';
import { type CpuShare, cpuMeter, postmasterPid } from './cpu.ts';
import { cpuCost } from './report.ts';
import { startServer } from './server.ts';
import { envNumber } from './setup.ts';

const RUNS = Math.max(1, envNumber('BENCH_CONSOLE_RUNS', 20));
const SIGN_IN_HEADING = 'Sign in to Leadwire';
const log = (msg: string) => process.stderr.write(`${msg}\n`);

/**
 * Counts what a page receives: every finished request's response headers and encoded body, and how many of its
 * requests the browser's cache answered (Chromium's DevTools protocol tells; Playwright's events do not).
 */
async function traffic(page: Page) {
  const pending: Promise<number>[] = [];
  let cached = 0;
  page.on('requestfinished', (req) => {
    pending.push(req.sizes().then((s) => s.responseHeadersSize + s.responseBodySize));
  });
  const cdp = await page.context().newCDPSession(page);
  cdp.on('Network.requestServedFromCache', () => void cached++);
  await cdp.send('Network.enable');
  return {
    /** What was received since the last take (all of its requests finished). */
    take: async (): Promise<Traffic> => {
      const sizes = await Promise.all(pending.splice(0));
      const fromCache = cached;
      cached = 0;
      return { requests: sizes.length, fromCache, bytes: sizes.reduce((a, b) => a + b, 0) };
    },
  };
}

/** Milliseconds `act` takes, and the traffic it caused. */
async function timed(t: Awaited<ReturnType<typeof traffic>>, act: () => Promise<unknown>): Promise<{ ms: number; traffic: Traffic }> {
  await t.take();
  const start = performance.now();
  await act();
  const ms = performance.now() - start;
  return { ms, traffic: await t.take() };
}

function summary(samples: { ms: number; traffic: Traffic }[]): Stats & Traffic {
  const n = Math.max(1, samples.length);
  return {
    ...stats(samples.map((s) => s.ms)),
    // Per load, averaged: a cold load's count is the same every time, its bytes within a few (cookies, dates).
    requests: Math.round(samples.reduce((a, s) => a + s.traffic.requests, 0) / n),
    fromCache: Math.round(samples.reduce((a, s) => a + s.traffic.fromCache, 0) / n),
    bytes: Math.round(samples.reduce((a, s) => a + s.traffic.bytes, 0) / n),
  };
}

/**
 * The server's and PostgreSQL's CPU over a loop of RUNS loads, divided by them. It holds what the server does in the
 * background meanwhile (its workers poll), which the reference loop's figure, measured the same way, shows.
 */
function perLoad(cpu: CpuShare | null): { serverMs: number; postgresMs: number } | null {
  const cost = cpu ? cpuCost(cpu, RUNS / cpu.seconds) : null;
  return cost ? { serverMs: cost.serverMs, postgresMs: cost.postgresMs } : null;
}

/**
 * Resolves on the first animation frame that shows an h1 reading `text`. Checked in the page on every frame: a
 * locator's waitFor polls at growing intervals (up to half a second), which would be measured as the console's time.
 */
const headingShown = (page: Page, text: string) =>
  page.waitForFunction((want) => [...document.querySelectorAll('h1')].some((h) => h.textContent === want && h.checkVisibility()), text, {
    polling: 'raf',
  });
const signInHeading = (page: Page) => headingShown(page, SIGN_IN_HEADING);
/** The overview with its data: the heading and the four charts' canvases, checked on every frame like the heading. */
const chartsDrawn = (page: Page) =>
  page.waitForFunction(
    () =>
      [...document.querySelectorAll('h1')].some((h) => h.textContent === 'Overview') &&
      document.querySelectorAll('.chart canvas').length >= 4,
    undefined,
    { polling: 'raf' },
  );

async function main() {
  log('building the console ...');
  const built = await buildConsole();
  log('starting server ...');
  const server = await startServer();
  const browser = await launchChromium();
  const onSignal = () => void Promise.allSettled([browser.close(), server.stop()]).finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const email = `bench-console-${Date.now()}@bench.example.com`;
    const password = randomBytes(18).toString('base64url');
    const res = await fetch(`${server.origin}/api/accounts/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password, organizationName: 'Console bench' }),
    });
    if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${await res.text()}`);
    const fresh = async () => {
      const context = await browser.newContext({ baseURL: server.origin });
      const page = await context.newPage();
      return { context, page, t: await traffic(page) };
    };
    // One throw-away round so that the server's and the browser's first-use costs (JIT, connection pools) are not
    // counted in the first sample.
    {
      const { context, page } = await fresh();
      await page.goto('/healthz');
      await page.goto('/app');
      await signInHeading(page);
      await context.close();
    }

    log(`reference: GET /healthz in a fresh context, ${RUNS} runs ...`);
    const reference = [];
    const meterReference = cpuMeter(server.pid, postmasterPid(server.dataDir));
    for (let i = 0; i < RUNS; i++) {
      const { context, page, t } = await fresh();
      reference.push(await timed(t, () => page.goto('/healthz', { waitUntil: 'load' })));
      await context.close();
    }
    const referenceCpu = perLoad(meterReference());

    log(`cold: /app in a fresh context to the sign-in heading, ${RUNS} runs ...`);
    const cold = [];
    const meter = cpuMeter(server.pid, postmasterPid(server.dataDir));
    for (let i = 0; i < RUNS; i++) {
      const { context, page, t } = await fresh();
      cold.push(await timed(t, () => page.goto('/app').then(() => signInHeading(page))));
      await context.close();
    }
    const coldCpu = perLoad(meter());

    log(`warm and signed in: ${RUNS} runs ...`);
    const warm = [];
    const signedIn = [];
    for (let i = 0; i < RUNS; i++) {
      const { context, page, t } = await fresh();
      await page.goto('/app');
      await signInHeading(page);
      warm.push(await timed(t, () => page.goto('/app').then(() => signInHeading(page))));
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      signedIn.push(
        await timed(t, async () => {
          await page.getByRole('button', { name: 'Sign in' }).click();
          // Since issue 29 the overview is charts of the workspace's activity: its first screen is drawn once they are.
          await chartsDrawn(page);
        }),
      );
      await context.close();
    }

    log(`sign-in API alone (POST /api/accounts/sign-in from the bench), ${RUNS} runs ...`);
    const signInApi = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      const answer = await fetch(`${server.origin}/api/accounts/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      await answer.arrayBuffer();
      if (answer.status !== 200) throw new Error(`sign-in answered ${answer.status}`);
      signInApi.push(performance.now() - start);
    }

    const figures: ConsoleFigures = {
      bundle: { files: built.files, gzipBytes: built.gzipBytes, gzipBudget: built.gzipBudget },
      reference: summary(reference),
      cold: summary(cold),
      warm: summary(warm),
      signedIn: summary(signedIn),
      signInApi: stats(signInApi),
      cpuPerFirstScreen: coldCpu,
      cpuPerReference: referenceCpu,
    };
    process.stdout.write(`\nLeadwire console benchmark (${new Date().toISOString()}), chromium ${browser.version()}\n`);
    process.stdout.write(`${formatConsole(figures)}\n\nBENCH_CONSOLE_RESULT ${JSON.stringify(figures)}\n`);
  } finally {
    await browser.close();
    await server.stop();
  }
}

await main();
