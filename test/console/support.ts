/**
 * The console as a person uses it: a real server and database (initTestApp) shared by the tests of a file, the run's
 * Chromium (test/support/chromium.ts) driving the built bundle at /app in a context per person, and what a test needs
 * around it (people of each role, signed in or with the typed API client for setting things up, screenshots, an
 * accessibility audit). Set-up goes through the API; each test clicks only through the flow it exists to prove.
 */
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashPassword } from '#core/accounts/passwords.ts';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { expect, onTestFailed, type TestContext } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { sharedChromium } from '../support/chromium.ts';
import { internalClient } from '../support/internal.ts';

export { hasChromium } from '../support/chromium.ts';

export const PASSWORD = 'correct horse battery staple';

/**
 * A console test walks a whole flow (a dozen screens' worth of clicks, axe audits and screenshots): 10 s on an idle
 * 2-core machine, three times that on a host three times slower or beside the rest of the suite. Each wait inside has
 * Playwright's own limit; this only bounds a hang.
 */
export const FLOW_TIMEOUT = 120_000;

/** Where the tests leave their pictures of screens (named in the README); not committed. */
export const SCREENSHOTS = fileURLToPath(new URL('../../.data/screenshots/', import.meta.url));

/**
 * `LEADWIRE_SCREENSHOTS=1`: a picture of every screen a test audits, as the docs' images are taken. Otherwise only what
 * explains a failure: the screen an audit refused, and every page a failing test had open. The full-page pictures of
 * every screen were 7-12 s of the machine's CPU in each run (about a sixth of the console files'), for files nobody
 * opens when the run passes: Playwright Test's own default is none, and `only-on-failure` its usual setting.
 */
const EVERY_SCREEN = process.env.LEADWIRE_SCREENSHOTS === '1';

export interface Person {
  email: string;
  password: string;
  role: 'owner' | 'admin' | 'member';
  userId: string;
  orgId: string;
}

/** What a test may set on a context of its own: the browser's time zone (the machine's otherwise), a proxy (publicOrigin). */
export type ContextOptions = Pick<BrowserContextOptions, 'timezoneId' | 'proxy'>;

export interface ConsoleHarness {
  t: TestApp;
  browser: Browser;
  /** A new workspace with its owner (signed up through the API, as the sign-up screen would). */
  owner(): Promise<Person>;
  /** Another person in `of`'s workspace, with `role`. */
  colleague(of: Person, role: 'admin' | 'member'): Promise<Person>;
  /**
   * A fresh browser context (its own cookies) with `who` signed in, on `path` below /app. The session comes from the
   * API's sign-in as the console asks for it (cookies), into the context's own cookie jar; the sign-in screen itself
   * is clicked through by test/console/shell.test.ts and the deep-link test of webhooks.test.ts.
   */
  signedIn(who: Person, path?: string, opts?: ContextOptions): Promise<{ page: Page; context: BrowserContext }>;
  /** A new browser context of the shared Chromium at the test server, closed by close() if the test has not. */
  newContext(opts?: ContextOptions): Promise<BrowserContext>;
  /** The typed internal API as `who` (a session of their own): for setting up what a test is not about. */
  api(who: Person): Promise<ReturnType<typeof internalClient>>;
  close(): Promise<void>;
}

let seq = 0;
const unique = (label: string) => `${label}-${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 8)}@example.com`;

/**
 * What the page last put on the clipboard. Read from the page rather than the clipboard itself: the run's one Chromium
 * has one clipboard, and another file's page may copy something in between.
 */
export const copied = (page: Page): Promise<string> => page.evaluate(() => (window as unknown as { __copied?: string }).__copied ?? '');

export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleHarness> {
  const t = await initTestApp(env);
  const browser = await sharedChromium();
  const contexts: BrowserContext[] = [];
  const newContext = async (opts: ContextOptions = {}) => {
    const context = await browser.newContext({ ...opts, baseURL: t.origin, permissions: ['clipboard-read', 'clipboard-write'] });
    // The clipboard is the browser's, shared by every file's pages at once: a page keeps what it wrote to it too.
    await context.addInitScript(() => {
      const write = navigator.clipboard.writeText.bind(navigator.clipboard);
      navigator.clipboard.writeText = async (text: string) => {
        (window as unknown as { __copied?: string }).__copied = text;
        return write(text);
      };
    });
    contexts.push(context);
    pictureOnFailure(context);
    return context;
  };
  return {
    t,
    browser,
    newContext,
    api: async (who) => internalClient(t, await sessionToken(t.origin, who)),
    owner: async () => {
      const email = unique('owner');
      const res = await fetch(`${t.origin}/api/accounts/sign-up`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: PASSWORD, organizationName: `Workspace ${seq}` }),
      });
      const body = (await res.json()) as { user: { id: string; orgId: string } };
      expect(res.status).toBe(201);
      return { email, password: PASSWORD, role: 'owner', userId: body.user.id, orgId: body.user.orgId };
    },
    colleague: async (of, role) => {
      const email = unique(role);
      const [row] = await t.sql<{ id: string }>(
        'insert into users (organization_id, email, password_hash, role) values (?, ?, ?, ?) returning id',
        [of.orgId, email, await hashPassword(PASSWORD), role],
      );
      return { email, password: PASSWORD, role, userId: row!.id, orgId: of.orgId };
    },
    signedIn: async (who, path = '/', opts = {}) => {
      const context = await newContext(opts);
      const res = await context.request.post('/api/trpc/accounts.signIn', {
        headers: { 'x-leadwire-session': 'cookie' },
        data: { email: who.email, password: who.password },
      });
      expect(res.status(), await res.text()).toBe(200);
      const page = await context.newPage();
      await page.goto(`/app${path === '/' ? '' : path}`);
      await page.getByRole('navigation', { name: 'Console' }).waitFor();
      return { page, context };
    },
    close: async () => {
      for (const c of contexts) await c.close().catch(() => {});
      // The file's connection only: the browser is the run's.
      await browser.close();
      await t.close();
    },
  };
}

let failedSeq = 0;

/**
 * When the running test fails, a picture of each page of `context` still open, `.data/screenshots/failed/<test>-<n>.png`,
 * named on stderr beside the failure. A context opened outside a test (a file's set-up) gets none.
 */
function pictureOnFailure(context: BrowserContext): void {
  const picture = async ({ task }: TestContext) => {
    const slug = `${task.file.name.replace(/^.*\//, '').replace(/\.test\.ts$/, '')}-${task.name}`.replace(/[^\w-]+/g, '-').slice(0, 120);
    const taken: string[] = [];
    for (const page of context.pages()) {
      const name = `failed/${slug}-${++failedSeq}`;
      // A page that crashed or closed with the failure has nothing left to show.
      await screenshot(page, name).then(
        () => taken.push(join(SCREENSHOTS, `${name}.png`)),
        () => {},
      );
    }
    if (taken.length) process.stderr.write(`The failing test's pages: ${taken.join(', ')}\n`);
  };
  try {
    onTestFailed(picture);
  } catch {
    // vitest refuses the hook outside a running test: a context of a file's set-up has no test of its own to fail.
  }
}

/** A session token for `who` from the API's sign-in (as a script would sign in, not the browser's cookie). */
async function sessionToken(origin: string, who: Person): Promise<string> {
  const res = await fetch(`${origin}/api/accounts/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: who.email, password: who.password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

/** The data cells of the row whose header cell is named `row`, exactly. */
export const cells = (page: Page, table: string, row: string) =>
  page
    .getByRole('table', { name: table })
    .locator('tbody tr')
    .filter({ has: page.getByRole('rowheader', { name: row, exact: true }) })
    .locator('td')
    .allTextContents();

/** A full-page picture of the screen, `.data/screenshots/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

const AXE = readFileSync(fileURLToPath(import.meta.resolve('axe-core/axe.min.js')), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * axe-core's WCAG 2.0, 2.1 and 2.2 A and AA rules on the page as it is now. Injected through the DevTools protocol
 * (page.evaluate), which the console's Content-Security-Policy does not govern, so the audited page keeps its policy.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Once per document: the console is one page, so later audits of its screens reuse the parsed script.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
}

/**
 * Fails with every WCAG 2.2 AA violation described, or passes. Leaves the screenshot `name` when it fails, or always
 * with LEADWIRE_SCREENSHOTS=1.
 */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  const violations = await axeViolations(page);
  if (EVERY_SCREEN || violations.length) await screenshot(page, name);
  expect(violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

/** No sideways scrolling: the page is no wider than the window. */
export async function expectNoSideScroll(page: Page): Promise<void> {
  // Charts follow their box once the browser reports the new size: waited for as an event, not a time.
  await page
    .waitForFunction(() => document.documentElement.scrollWidth <= window.innerWidth, undefined, { timeout: 5_000 })
    .catch(() => {});
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll).toBeLessThanOrEqual(width);
}
